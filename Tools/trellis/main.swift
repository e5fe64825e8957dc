import Foundation

// Everything lives in `RootCommand.main` so that the demo (and tests of argument handling) can run the same code paths
// in-process; this file only connects it to the process.
exit(RootCommand.main(Array(CommandLine.arguments.dropFirst()), console: Console()).rawValue)
