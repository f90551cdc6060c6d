import Foundation
import ShareQueue
#if canImport(UIKit)
import UIKit
#endif
#if canImport(SwiftUI)
import SwiftUI
#endif

// The code of the guide (Documentation/Library.md), of the DocC catalog an app reads
// (Sources/ShareQueue/ShareQueue.docc) and of the doc comments it shows, word for word, so that it compiles: GuideTests
// checks that every snippet there is here, and runs the host's code. What a snippet
// assumes (a path, a value the user shared) is a parameter of the function around it.
// A manifest compiles only in SwiftPM, and UIKit and SwiftUI only on Apple platforms.

struct SharedLink: SharedContent, Equatable, Sendable {
    static let contentKind: Record.Kind = "link"
    var url: URL
    var title: String
    var sharedAt: Date
    var tags: [String]
    var note: String?
}

struct CurrentWallpaper: SharedContent, Equatable, Sendable {
    static let contentKind: Record.Kind = "current-wallpaper"
    var name: String
    var imageSHA256: String?
}

struct SharedNote: SharedContent, Equatable, Sendable {
    static let contentKind: Record.Kind = "note"
    var text: String
}

/// A type of another module's, which cannot conform to `SharedContent`.
struct Bookmark: Codable, Equatable, Sendable {
    var title: String
}

enum GuideKinds {
    static func share(_ appender: QueueAppender, bookmark: Bookmark) async throws {
        try await appender.append(bookmark, kind: "bookmark", source: "share-extension")
    }

    static func take(_ drainer: QueueDrainer) throws -> [Bookmark] {
        var bookmarks: [Bookmark] = []
        try drainer.drain(Bookmark.self, kind: "bookmark") { batch in bookmarks += batch.map(\.value) }
        return bookmarks
    }
}

#if canImport(PackageDescription)
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "NotesApp",
    platforms: [.iOS(.v16), .macOS(.v13)],
    dependencies: [
        .package(url: "https://github.com/example/ShareQueue.git", from: "1.0.0"),
    ],
    targets: [
        .target(name: "SharedTypes", dependencies: [.product(name: "ShareQueue", package: "ShareQueue")]),
    ]
)
#endif

enum GuideExtension {
    static func share(dir: String, url: URL, title: String, tags: [String], note: String?) async throws -> String {
        let appender = try QueueAppender(directory: QueueDirectory(path: dir))
        let link = SharedLink(url: url, title: title, sharedAt: Date(), tags: tags, note: note)
        let id = try await appender.append(link, source: "share-extension")
        return id
    }

    static func shareSeveral(_ appender: QueueAppender, links: [SharedLink], link: SharedLink, imageURL: URL) async throws -> [String] {
        let ids = try await appender.append(contentsOf: links, source: "share-extension")
        let withImage = try await appender.append(link, source: "share-extension", attaching: [imageURL])
        return ids + [withImage]
    }

    static func shareTellingFullFromBusy(_ appender: QueueAppender, link: SharedLink) async throws {
        do {
            try await appender.append(link, source: "share-extension")
        } catch ShareQueueError.queueFull {
            // Nothing was appended and only a drain makes room: ask the user to open the app.
        } catch ShareQueueError.busy {
            // Another process held the producers' lock throughout `lockTimeoutSeconds`: retry in a moment.
        }
    }

    static func publish(_ appender: QueueAppender, name: String, sha256: String?) async throws -> Bool {
        let current = CurrentWallpaper(name: name, imageSHA256: sha256)
        let published = try await appender.appendIfChanged(current, source: "share-extension", key: "current-wallpaper")
        return published.appended
    }
}

/// An app's own error, which a drain rethrows as a handler threw it.
struct DatabaseOffline: Error {}

/// An app's own store's error.
struct StoreError: Error {}

/// An app's own store, which saves a batch or throws.
final class LinkStore {
    private(set) var saved: [String: SharedLink] = [:]
    var offline = false

    func save(_ links: [DrainedValue<SharedLink>]) throws {
        if offline { throw StoreError() }
        for link in links { saved[link.id] = link.value }
    }
}

enum GuideErrors {
    /// Drains into the store; its own error leaves the batch queued.
    static func drain(_ drainer: QueueDrainer, into store: LinkStore) async throws {
        do {
            try await drainer.drain(SharedLink.self) { links in try store.save(links) }
        } catch is StoreError {
            // The store's own error: the batch stays queued and comes again at the next drain.
        } catch ShareQueueError.busy {
            // Another drain is running: nothing was lost; drain again later.
        }
    }
}

/// An app's own store of links, an actor of its own.
actor LinkDatabase {
    private(set) var saved: [String: SharedLink] = [:]

    func save(_ links: [DrainedValue<SharedLink>]) throws {
        for link in links { saved[link.id] = link.value }
    }
}

@MainActor
final class InboxModel {
    let drainer: QueueDrainer
    private(set) var links: [String: SharedLink] = [:]      // by record id: a batch delivered again replaces itself
    private(set) var wallpaper: CurrentWallpaper?

    init(drainer: QueueDrainer) { self.drainer = drainer }

    @discardableResult
    func refresh() async throws -> DrainSummary {
        var inbox = ContentRouter()
        inbox.on(SharedLink.self) { batch in
            for link in batch { self.links[link.id] = link.value }
        }
        inbox.on(CurrentWallpaper.self) { batch in
            self.wallpaper = batch.last?.value ?? self.wallpaper
        }
        return try await drainer.drain(into: &inbox)
    }
}

extension InboxModel {
    /// Drains on every change notice while the app runs; ends when its task is cancelled.
    func drainWhileRunning(_ queue: QueueDirectory) async throws {
        for await _ in try queue.changes() {
            do {
                try await refresh()
            } catch ShareQueueError.busy {
                // Another drain holds the queue: nothing was lost; the next notice retries.
            } catch is DatabaseOffline {
                // The app's own error, as a handler threw it: the batch stays queued; the next notice retries.
            }
        }
    }
}

extension InboxModel {
    /// The guide's other handlers: one that awaits, one for a newer extension's kinds, and one that keeps files.
    func refreshIntoDatabase(_ database: LinkDatabase, photos: URL) async throws -> [Record.Kind: Int] {
        var inbox = ContentRouter()
        inbox.on(SharedLink.self) { batch in
            try await database.save(batch)        // the batch commits once this returns
        }
        inbox.otherwise = .setAside               // other kinds go to the dead letters, counted in inbox.setAside
        try await drainer.drain(into: &inbox)

        var photosInbox = ContentRouter()
        photosInbox.on(SharedLink.self) { batch in
            for link in batch {
                for attachment in link.attachments {
                    guard let file = attachment.url else { continue }
                    // The drain copied it out of the queue: it is the app's, until the app moves or removes it.
                    try FileManager.default.moveItem(at: file, to: photos.appending(path: link.id + "-" + attachment.name))
                }
            }
        }
        try await drainer.drain(into: &photosInbox)
        return inbox.setAside
    }

    func refreshNow() async {
        do {
            try await refresh()
        } catch ShareQueueError.busy {
            // Another drain is running: nothing was lost; drain again later.
        } catch let error as DatabaseOffline {
            // The app's own error, as a handler threw it: the batch stays queued for the next drain.
            log(error)
        } catch {
            log(error)
        }
    }
}

func log(_ error: any Error) {}

extension InboxModel {
    /// The doc comments' code: a typed drain and a router drained with `await`, into this model.
    func refreshFromDocComments(_ database: LinkDatabase) async throws {
        try await drainer.drain(SharedLink.self) { batch in
            for link in batch { self.links[link.id] = link.value }      // a @MainActor model, no lock
            try await database.save(batch)
        }

        var inbox = ContentRouter()
        inbox.on(SharedLink.self) { batch in try await database.save(batch) }
        inbox.on(CurrentWallpaper.self) { batch in self.wallpaper = batch.last?.value ?? self.wallpaper }
        try await drainer.drain(into: &inbox)
    }

    /// The doc comments' loop over change notices, and the generic `async` drain; compiled, never run (it ends only when cancelled).
    func drainOnNotices(_ queue: QueueDirectory, into inbox: inout ContentRouter) async throws {
        for await _ in try queue.changes() {
            try await drainer.drain(into: &inbox)
        }
        let summary = try await drainer.drain(into: &inbox)
        _ = summary
    }
}

enum GuideHost {
    /// The blocking forms, whose closures change local state.
    static func countLinks(_ drainer: QueueDrainer) throws -> Int {
        var count = 0
        try drainer.drain(SharedLink.self) { batch in count += batch.count }

        var links = 0, notes: [SharedNote] = []
        var inbox = ContentRouter()
        inbox.on(SharedLink.self) { links += $0.count }                  // [DrainedValue<SharedLink>]
        inbox.on(SharedNote.self) { batch in notes += batch.map(\.value) }
        let summary = try drainer.drain(into: &inbox)
        _ = summary
        return count + links + notes.count
    }

    /// What a drain deals with on its own, as values.
    static func logEvents(_ drainer: QueueDrainer) {
        drainer.onEvent = { event in
            if case .recordDeadLettered(let id, _, let reason) = event {
                print("record \(id) is a dead letter, for a person to look at: \(reason)")
            } else {
                print(event)                                // in the words host-drain prints
            }
        }
    }

    /// The batches as an `AsyncSequence`.
    static func loop(_ drainer: QueueDrainer) async throws -> [String: SharedLink] {
        var links: [String: SharedLink] = [:]
        for try await batch in drainer.batches(of: SharedLink.self) {
            for link in batch { links[link.id] = link.value }
        }
        return links
    }

    static func overview(queue: QueueDirectory, url: URL, title: String) async throws -> [SharedLink] {
        // In the extension:
        let appender = try QueueAppender(directory: queue)
        try await appender.append(SharedLink(url: url, title: title, sharedAt: Date(), tags: [], note: nil), source: "share-extension")

        // In the host:
        let drainer = try QueueDrainer(directory: queue)
        var links: [SharedLink] = []
        try await drainer.drain(SharedLink.self) { batch in links += batch.map(\.value) }
        return links
    }
}

#if canImport(UIKit)
@MainActor func drainInBackground(_ model: InboxModel) async {
    let drain = Task { try await model.refresh() }
    let background = UIApplication.shared.beginBackgroundTask { drain.cancel() }
    _ = try? await drain.value
    UIApplication.shared.endBackgroundTask(background)
}
#endif

#if canImport(SwiftUI)
struct InboxView: View {
    let model: InboxModel
    var body: some View { Text("\(model.links.count) links") }
}

struct NotesApp: App {
    @Environment(\.scenePhase) private var scenePhase
    @State private var model: InboxModel
    let queue: QueueDirectory

    var body: some Scene {
        WindowGroup {
            InboxView(model: model)
                .task { try? await model.drainWhileRunning(queue) }      // at launch, then on every notice
        }
        .onChange(of: scenePhase) { _, phase in
            if phase == .active { Task { try? await model.refresh() } }
        }
#if os(iOS)
        .backgroundTask(.appRefresh("drain-shared-items")) { try? await model.refresh() }
#endif
    }
}
#endif

enum GuidePlainRecords {
    static func run(containerPath: String) throws -> DrainSummary {
        // In the extension:
        let queue = try QueueDirectory(path: containerPath + "/ShareQueue")
        let id = try QueueAppender(directory: queue).append(RecordDraft(.url("https://swift.org"), source: "share-extension"))
        // Publishing a current value: appended only if it differs from the last record with this key.
        let (current, appended) = try QueueAppender(directory: queue).appendIfChanged(RecordDraft(.text("beach.jpg"), source: "widget", key: "wallpaper"))

        // In the host app:
        struct Inbox: DrainSink {
            mutating func deliver(_ batch: DrainBatch) throws {
                for drained in batch.records { try save(drained.record) }   // throw to keep the batch queued
            }
        }
        var inbox = Inbox()
        let summary = try QueueDrainer(directory: queue).drain(into: &inbox)
        _ = (id, current, appended)
        return summary
    }
}

private func save(_ record: Record) throws {}
