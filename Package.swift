// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Trellis",
    products: [
        .library(name: "Trellis", targets: ["Trellis"]),
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
        .target(
            name: "Trellis",
            dependencies: ["CZlib"],
            path: "Sources/Trellis"
        ),
        .executableTarget(
            name: "trellis",
            dependencies: ["Trellis"],
            path: "Tools/trellis",
            exclude: ["README.md"]
        ),
        .executableTarget(
            name: "trellis-bench",
            dependencies: ["Trellis", "CSQLite"],
            path: "Tools/trellis-bench",
            exclude: ["RESULTS.md"]
        ),
        .executableTarget(
            name: "trellis-crashtest",
            dependencies: ["Trellis"],
            path: "Tools/trellis-crashtest"
        ),
        .testTarget(
            name: "TrellisTests",
            dependencies: ["Trellis", "trellis-crashtest"],
            path: "Tests/TrellisTests",
            exclude: ["Crash/README.md", "Fixtures"]
        ),
        .testTarget(
            name: "TrellisToolTests",
            dependencies: ["Trellis"],
            path: "Tests/TrellisToolTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
