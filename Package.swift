// swift-tools-version:6.1
import PackageDescription

// Layers, lowest first; each target imports only those below it:
//   ShareQueueSystem   the only code that calls the C library for the queue (CLinuxSystem: what Swift's C module lacks)
//   ShareQueueCore     records, the on-disk format, appending and draining, without Foundation
//   ShareQueueCodable  typed content: Codable values in and out (over Foundation's Date, URL, UUID and Data)
//   ShareQueue         what an app imports: both of the above re-exported, and the async forms
//   ShareQueueStore    a SQLite store that takes records exactly once (over the system's SQLite)
//   ToolSupport        what only the tools need: arguments, help and exit codes, child processes, signals
//   ShareAppend, HostDrain, ShareQueueStress   each tool's logic; the executables are their entry points

// share-append and host-drain link everything statically on Linux, the Swift
// runtime and the C library included: no program loader, no shared libstdc++ to
// relocate and initialize, which brings a process within 2x of a C program.
// They stay position-independent (static-pie), so they keep ASLR.
// Sources/Linker/static-pie-ld (no target: a script) links them with the toolchain's lld (gold cannot), without
// the runpath glibc refuses in them. The library carries no such setting, so it
// stays usable as a dependency; share-stress, a test tool, is linked as usual.
// Only release builds: a debug build, and so `swift test --sanitize=...`, links them
// dynamically, since the sanitizers' runtimes cannot live in a static executable.
let staticExecutable: [LinkerSetting] = [
    .unsafeFlags(["-static-executable", "-Xclang-linker", "-static-pie", "-use-ld=lld", "-ld-path=\(Context.packageDirectory)/Sources/Linker/static-pie-ld"],
                 .when(platforms: [.linux], configuration: .release)),
]
// The trait TestHooks compiles in the deliberate defects of the mutation catalogue
// (Sources/ShareQueueSystem/Mutant.swift) and the left-out syncs, which the tests and
// `share-stress power-cut` use: `swift test --traits TestHooks`. It is off by default,
// so that neither an app nor an installed tool can be made to run them.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .define("SHARE_QUEUE_TEST_HOOKS", .when(traits: ["TestHooks"])),
]

let package = Package(
    name: "ShareQueue",
    platforms: [.macOS(.v13), .iOS(.v16), .watchOS(.v9), .tvOS(.v16), .visionOS(.v1)],
    products: [
        .library(name: "ShareQueue", targets: ["ShareQueue"]),
        .executable(name: "share-append", targets: ["share-append"]),
        .executable(name: "host-drain", targets: ["host-drain"]),
        .executable(name: "share-stress", targets: ["share-stress"]),
    ],
    traits: [
        .trait(name: "TestHooks", description: "Compiles in the mutation catalogue and the left-out syncs that the tests and share-stress power-cut use; never for a build an app ships."),
    ],
    targets: [
        // The Linux calls the C library's Swift module leaves out (renameat2, mallopt, a thread's own timer for lock waits): a header, nothing to link.
        .systemLibrary(name: "CLinuxSystem"),
        .target(name: "ShareQueueSystem", dependencies: ["CLinuxSystem"], swiftSettings: strict),
        // The processor's CRC-32C instruction, where it has one: a header, nothing to link.
        .systemLibrary(name: "CChecksum"),
        .target(name: "ShareQueueCore", dependencies: ["ShareQueueSystem", "CChecksum"], swiftSettings: strict),
        // Apart from ShareQueueCore, so that share-append, which needs no Codable values, does not load Foundation.
        .target(name: "ShareQueueCodable", dependencies: ["ShareQueueCore", "ShareQueueSystem"], swiftSettings: strict),
        // The one module an app imports, as NIO re-exports NIOCore.
        .target(name: "ShareQueue", dependencies: ["ShareQueueCore", "ShareQueueCodable", "ShareQueueSystem"], swiftSettings: strict),
        // The system's SQLite, for the host-side store; no package dependency.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .target(name: "ShareQueueStore", dependencies: ["ShareQueueCore", "ShareQueueSystem", "CSQLite"], swiftSettings: strict),
        .target(name: "ToolSupport", dependencies: ["ShareQueueCore", "ShareQueueSystem"], swiftSettings: strict),
        .target(name: "ShareAppend", dependencies: ["ShareQueueCore", "ShareQueueSystem", "ToolSupport"], swiftSettings: strict),
        // Apart from ShareAppend, so that share-append does not load SQLite.
        .target(name: "HostDrain", dependencies: ["ShareQueueCore", "ShareQueueSystem", "ToolSupport", "ShareQueueStore"], swiftSettings: strict),
        // The stress and crash-point runs: a test tool, so it may use Foundation.
        // Floor/floor.c is the benchmark's physical floor: compiled by the benchmark itself with
        // the C compiler, never by SwiftPM, which would link it against the Swift runtime.
        .target(name: "ShareQueueStress", dependencies: ["ShareQueue", "ShareQueueCore", "ShareQueueCodable", "ShareQueueSystem", "ToolSupport", "ShareQueueStore", "CSQLite"],
                exclude: ["Floor"], swiftSettings: strict),
        .executableTarget(name: "share-append", dependencies: ["ShareAppend", "ToolSupport"], linkerSettings: staticExecutable),
        .executableTarget(name: "host-drain", dependencies: ["HostDrain", "ToolSupport"], linkerSettings: staticExecutable),
        .executableTarget(name: "share-stress", dependencies: ["ShareQueueStress", "ToolSupport"]),
        .testTarget(
            name: "ShareQueueTests",
            dependencies: ["ShareQueue", "ShareQueueCore", "ShareQueueCodable", "ShareQueueSystem", "ToolSupport"],
            swiftSettings: strict
        ),
    ]
)
