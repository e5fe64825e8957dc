import Foundation
import Testing

/// `trellis demo` with small sizes: it builds a real store, reports the reader's figures, then `info` and `verify`.
@Suite struct DemoTests {
    @Test func demoOnASmallTreePrintsItsFiguresAndAVerifiedStore() throws {
        let directory = Fixture.newDirectory("demo")
        defer { Fixture.cleanUp(directory) }
        let result = try Tool.run(["demo", directory.path, "--items", "2000", "--depth", "4"])
        #expect(result.status == 0, "\(result)")
        let out = result.stdout
        #expect(out.hasPrefix("Trellis demo: an outline store (folders holding items) in \(directory.path)\n"))
        for label in [
            "import of 2000 items (one commit): ", "build of a 1111-folder tree (one commit): ",
            "cascade delete of the 1111-folder tree (one commit): ",
        ] {
            let line = try #require(out.split(separator: "\n").first { $0.hasPrefix(label) }, "\(label)\n\(out)")
            #expect(line.contains(" s; the reader completed ") && line.contains(" fetches meanwhile, worst "))
        }
        #expect(out.contains("final store: 1 folders, 2000 items, sequence 4;"))
        #expect(out.contains("inconsistent results: 0\n"))
        // Then version 2 of the schema: one migration record, after the three commits.
        let migration = try #require(
            out.split(separator: "\n").first { $0.hasPrefix("reopen with schema v2 ") }, "\(out)")
        #expect(
            migration.hasPrefix("reopen with schema v2 (recovery, then the migration as one record at sequence 5): "))
        #expect(
            migration.hasSuffix(
                " s; Item: add attribute 'priority' (Int, default 0) (2000 objects); "
                    + "Item: add index on (priority) (2000 objects)"))
        #expect(out.contains("\n$ trellis info \(directory.path)\n"))
        #expect(out.contains("\n      Item: add index on (priority) (2000 objects)\n"))
        #expect(out.contains("objects     Folder 1, Item 2000 (as of sequence 5)"))
        #expect(out.contains("\n$ trellis verify \(directory.path)\n"))
        #expect(out.hasSuffix("clean: no problems\n"))
        #expect(try Tool.run(["verify", directory.path]).status == 0)
    }

    @Test func demoRefusesADirectoryThatIsNotEmpty() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        let result = try Tool.run(["demo", store.path, "--items", "10", "--depth", "2"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("is not empty"), "\(result)")
    }
}
