// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Trellis",
    // The first releases with Synchronization's Mutex and Atomic, which every layer uses. Only Linux is built and
    // tested (see README.md, "Platforms"); the Apple platforms' code paths are written but not compiled here.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Trellis", targets: ["Trellis"]),
        // Replication through NATS JetStream: opt-in, one import beside `Trellis` (the umbrella does not export it).
        .library(name: "TrellisReplication", targets: ["TrellisReplication"]),
        .executable(name: "trellis", targets: ["trellis"]),
        .executable(name: "trellis-bench", targets: ["trellis-bench"]),
    ],
    targets: [
        .systemLibrary(
            name: "CZlib",
            path: "Sources/CZlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // The bench's third engine (issue 21): only trellis-bench links it.
        .systemLibrary(
            name: "CLMDB",
            path: "Sources/CLMDB",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        // ThreadSanitizer's annotations (weak, a no-op without its runtime), for the locks it cannot see.
        .systemLibrary(
            name: "CThreadSanitizer",
            path: "Sources/CThreadSanitizer"
        ),
        // Prefetch hints (static inline functions of the compiler's builtins), for the bulk loads' scattered writes.
        .systemLibrary(
            name: "CTrellisHints",
            path: "Sources/CTrellisHints"
        ),
        // The library's layers, each importing only those below it (`.ci/check-layers.py` keeps it so):
        // TrellisCore ◂ TrellisGraph ◂ TrellisJournal ◂ TrellisStore ◂ Trellis (the umbrella apps import).
        .target(
            name: "TrellisCore",
            dependencies: ["CThreadSanitizer"],
            path: "Sources/TrellisCore"
        ),
        .target(
            name: "TrellisGraph",
            dependencies: ["TrellisCore", "CTrellisHints"],
            path: "Sources/TrellisGraph",
            // Node counting for the commit-cost tests: in debug builds, and in the release build CI tests
            // (`-Xswiftc -DTRELLIS_COUNT_NODES`); a release build of an app has no counter.
            swiftSettings: [.define("TRELLIS_COUNT_NODES", .when(configuration: .debug))]
        ),
        .target(
            name: "TrellisJournal",
            dependencies: ["TrellisCore", "TrellisGraph", "CZlib"],
            path: "Sources/TrellisJournal"
        ),
        .target(
            name: "TrellisStore",
            dependencies: ["TrellisCore", "TrellisGraph", "TrellisJournal"],
            path: "Sources/TrellisStore"
        ),
        .target(
            name: "Trellis",
            dependencies: ["TrellisCore", "TrellisGraph", "TrellisJournal", "TrellisStore"],
            path: "Sources/Trellis"
        ),
        // The NATS and JetStream client (POSIX sockets), for the replication layer: only that layer may import it.
        .target(
            name: "TrellisNATS",
            dependencies: ["TrellisCore"],
            path: "Sources/TrellisNATS"
        ),
        // Replication of a store's journal through NATS JetStream (replication-format.md). Beside the umbrella, not in
        // it: an app that replicates adds `import TrellisReplication`, and one that does not never links the client.
        .target(
            name: "TrellisReplication",
            dependencies: ["TrellisCore", "TrellisGraph", "TrellisJournal", "TrellisStore", "TrellisNATS"],
            path: "Sources/TrellisReplication"
        ),
        // Test support, not product: the simulated file layer (the crash suite's F harness). No product and no library
        // layer depends on it (`.ci/check-layers.py` keeps it so); the tests and the fuzzer do.
        .target(
            name: "TrellisTestSupport",
            dependencies: ["TrellisCore", "TrellisJournal"],
            path: "Sources/TrellisTestSupport"
        ),
        // A real nats-server as a child process, for the NATS and replication tests and the bench's R1; never shipped.
        .target(
            name: "TrellisNATSServer",
            dependencies: ["TrellisCore"],
            path: "Sources/TrellisNATSServer"
        ),
        .executableTarget(
            name: "trellis",
            dependencies: ["Trellis", "TrellisReplication"],
            path: "Tools/trellis",
            exclude: ["README.md"]
        ),
        .executableTarget(
            name: "trellis-bench",
            dependencies: ["Trellis", "TrellisReplication", "TrellisNATSServer", "CSQLite", "CLMDB"],
            path: "Tools/trellis-bench",
            exclude: ["RESULTS.md"]
        ),
        .executableTarget(
            name: "trellis-crashtest",
            dependencies: ["Trellis", "TrellisJournal", "TrellisReplication"],
            path: "Tools/trellis-crashtest"
        ),
        .testTarget(
            name: "TrellisTests",
            dependencies: [
                "Trellis", "TrellisCore", "TrellisGraph", "TrellisJournal", "TrellisStore", "TrellisTestSupport",
                "trellis-crashtest",
            ],
            path: "Tests/TrellisTests",
            exclude: ["Crash/README.md", "Fixtures"],
            // The tests' own code is orchestration and checks; the library it calls is optimised in a release build,
            // and an optimised whole-module build of this target was the longest serial step of CI's release build.
            swiftSettings: [
                .define("TRELLIS_COUNT_NODES", .when(configuration: .debug)),
                .unsafeFlags(["-Onone"], .when(configuration: .release)),
            ]
        ),
        .testTarget(
            name: "TrellisNATSTests",
            dependencies: ["TrellisNATS", "TrellisNATSServer"],
            path: "Tests/TrellisNATSTests",
            swiftSettings: [.unsafeFlags(["-Onone"], .when(configuration: .release))]
        ),
        .testTarget(
            name: "TrellisReplicationTests",
            dependencies: [
                "Trellis", "TrellisReplication", "TrellisNATS", "TrellisNATSServer", "TrellisJournal",
                "trellis-crashtest",
            ],
            path: "Tests/TrellisReplicationTests",
            swiftSettings: [.unsafeFlags(["-Onone"], .when(configuration: .release))]
        ),
        .testTarget(
            name: "TrellisToolTests",
            dependencies: ["Trellis"],
            path: "Tests/TrellisToolTests",
            // As TrellisTests: the tool it runs is optimised; its own code needs no optimiser.
            swiftSettings: [.unsafeFlags(["-Onone"], .when(configuration: .release))]
        ),
    ],
    swiftLanguageModes: [.v6]
)
