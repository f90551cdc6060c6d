// swift-tools-version:6.0
import PackageDescription

// A share extension and its host app, as two command-line programs that share
// one queue directory (on iOS: a folder in the App Group's container).
//
//   SharedTypes      the content types both sides encode and decode
//   ShareExtension   appends what the user shared, and publishes the current wallpaper
//   HostApp          drains the queue into the app's own store
//
// It is built as an app outside the library would be: Swift 6 language mode (complete
// concurrency checking), member imports checked, and only `import ShareQueue`.
//
// Build and run from this folder:
//   swift build
//   .build/debug/ShareExtension --dir /tmp/q link https://swift.org "Swift" --tag lang
//   .build/debug/HostApp --dir /tmp/q --store /tmp/links.json
let appSettings: [SwiftSetting] = [.enableUpcomingFeature("MemberImportVisibility")]

let package = Package(
    name: "SharingApp",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [
        // The ShareQueue package itself, two folders up; an app would name its URL and version.
        .package(name: "ShareQueue", path: "../.."),
    ],
    targets: [
        .target(name: "SharedTypes", dependencies: [.product(name: "ShareQueue", package: "ShareQueue")], swiftSettings: appSettings),
        .executableTarget(name: "ShareExtension", dependencies: ["SharedTypes", .product(name: "ShareQueue", package: "ShareQueue")],
                          swiftSettings: appSettings),
        .executableTarget(name: "HostApp", dependencies: ["SharedTypes", .product(name: "ShareQueue", package: "ShareQueue")],
                          swiftSettings: appSettings),
    ],
    swiftLanguageModes: [.v6]
)
