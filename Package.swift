// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "ShareQueue",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "ShareQueue", targets: ["ShareQueue"]),
        .executable(name: "share-append", targets: ["share-append"]),
        .executable(name: "host-drain", targets: ["host-drain"]),
        .executable(name: "share-stress", targets: ["share-stress"]),
    ],
    targets: [
        // The queue itself: what an app, an extension and both tools link.
        .target(name: "ShareQueue"),
        // Argument parsing, help texts, sinks and exit codes shared by the tools.
        .target(name: "ShareQueueCLI", dependencies: ["ShareQueue"]),
        .executableTarget(name: "share-append", dependencies: ["ShareQueueCLI"]),
        .executableTarget(name: "host-drain", dependencies: ["ShareQueueCLI"]),
        // The stress and crash-point runs: a test tool, so it may use Foundation.
        .target(name: "ShareQueueStress", dependencies: ["ShareQueue", "ShareQueueCLI"]),
        .executableTarget(name: "share-stress", dependencies: ["ShareQueueStress"]),
        .testTarget(
            name: "ShareQueueTests",
            dependencies: ["ShareQueue", "share-append", "host-drain", "share-stress"]
        ),
    ]
)
