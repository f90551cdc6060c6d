// swift-tools-version:6.0
import PackageDescription

// The tools link the Swift runtime statically on Linux, which halves their
// start-up; the library carries no such setting, so it stays usable as a dependency.
let staticSwiftRuntime: [LinkerSetting] = [.unsafeFlags(["-static-stdlib"], .when(platforms: [.linux]))]

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
        // The queue itself: what an app, an extension and the tools link.
        .target(name: "ShareQueue"),
        // The system's SQLite, for the host-side store; no package dependency.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        // A SQLite store that takes records exactly once.
        .target(name: "ShareQueueStore", dependencies: ["ShareQueue", "CSQLite"]),
        // Argument parsing, help and exit codes shared by the tools, and share-append.
        .target(name: "ShareQueueCLI", dependencies: ["ShareQueue"]),
        // host-drain's sinks and watch mode; apart, so that share-append does not load SQLite.
        .target(name: "HostDrain", dependencies: ["ShareQueue", "ShareQueueCLI", "ShareQueueStore"]),
        .executableTarget(name: "share-append", dependencies: ["ShareQueueCLI"], linkerSettings: staticSwiftRuntime),
        .executableTarget(name: "host-drain", dependencies: ["HostDrain"], linkerSettings: staticSwiftRuntime),
        // The stress and crash-point runs: a test tool, so it may use Foundation.
        .target(name: "ShareQueueStress", dependencies: ["ShareQueue", "ShareQueueCLI", "ShareQueueStore"]),
        .executableTarget(name: "share-stress", dependencies: ["ShareQueueStress", "share-floor"]),
        // The physical floor that benchmarks are quoted against, in C.
        .executableTarget(name: "share-floor"),
        .testTarget(
            name: "ShareQueueTests",
            dependencies: ["ShareQueue"]
        ),
    ]
)
