// libFuzzer's entry point for the journal, checkpoint and manifest readers (case 20 of the crash matrix).
//
// This folder is not a SwiftPM target: `run-fuzz.sh` compiles the library's modules with testing enabled (so the
// files here reach the internal readers through `@testable import`) and this folder on top, all with
// `-sanitize=fuzzer`. See `FuzzInput` for how an input is laid out.

@c(LLVMFuzzerTestOneInput)
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    FuzzReaders.run(FuzzInput(bytes))
    return 0
}
