// swift-tools-version:6.0
import PackageDescription

// Forwards host-drain's batches into a NATS JetStream stream, exactly once within the
// stream's duplicate window, through the official C client (libnats). A package of its
// own, so that ShareQueue's build needs nothing of NATS.
//
//   CNATS              the system's libnats (Debian: libnats-dev; Homebrew: cnats)
//   NATSForwarding     options, the batch on standard input, the connection, the stream's checks, publishing, exit codes
//   forward-nats       the command host-drain runs: host-drain --exec 'forward-nats --subject shared.items'
//   nats-stream-dump   what a stream holds, one message a line: the forwarding test's witness
//
// Build from this folder with `swift build -c release`; Floor/ holds the benchmark's
// C-only publisher, compiled by bench.sh with the C compiler.
let staticSwiftRuntime: [LinkerSetting] = [.unsafeFlags(["-static-stdlib"], .when(platforms: [.linux]))]

let package = Package(
    name: "NATSForwarder",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "forward-nats", targets: ["forward-nats"]),
        .executable(name: "nats-stream-dump", targets: ["nats-stream-dump"]),
    ],
    targets: [
        .systemLibrary(name: "CNATS", pkgConfig: "libnats", providers: [.apt(["libnats-dev"]), .brew(["cnats"])]),
        .target(name: "NATSForwarding", dependencies: ["CNATS"]),
        .executableTarget(name: "forward-nats", dependencies: ["NATSForwarding"], linkerSettings: staticSwiftRuntime),
        .executableTarget(name: "nats-stream-dump", dependencies: ["NATSForwarding", "CNATS"], linkerSettings: staticSwiftRuntime),
    ]
)
