import Foundation
import Testing
import ShareQueue

/// The code of the guide, of the DocC catalog and of the doc comments it shows: every snippet is in
/// GuideSnippets.swift, word for word, so that it compiles; and the host's code drains what the extension's code appends.
@Suite("Guide snippets")
struct GuideTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
    static let documents = ["Documentation/Library.md"] + ["ShareQueue.md", "Installation.md", "DrainingSeveralTypes.md", "Concurrency.md",
                                                           "DrainingWhileRunning.md", "Attachments.md", "HandlingErrors.md"].map { "Sources/ShareQueue/ShareQueue.docc/" + $0 }

    /// The source files of the modules an app imports whose doc comments hold Swift code: the DocC catalog shows it.
    static let documentedSources: [String] = ["ShareQueue", "ShareQueueCodable", "ShareQueueCore"].flatMap { module in
        let folder = root + "/Sources/" + module
        let files = FileManager.default.enumerator(atPath: folder)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        return files.sorted().map { "Sources/\(module)/\($0)" }.filter { file in
            (try? String(contentsOfFile: root + "/" + file, encoding: .utf8))?.contains("/// ```swift") == true
        }
    }

    /// The Swift code blocks of a Markdown document, or of a source file's doc comments, each as its lines.
    static func snippets(of document: String) throws -> [[String]] {
        let text = try String(contentsOfFile: root + "/" + document, encoding: .utf8)
        let docComments = document.hasSuffix(".swift")
        var blocks: [[String]] = [], current: [String]?
        for whole in text.components(separatedBy: "\n") {
            var line = whole
            if docComments {
                let trimmed = whole.trimmingCharacters(in: .whitespaces)
                guard trimmed.hasPrefix("///") else { continue }
                line = String(trimmed.dropFirst(3))
            }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current == nil, trimmed == "```swift" { current = [] }
            else if current != nil, trimmed == "```" { blocks.append(current!); current = nil }
            else { current?.append(line) }
        }
        return blocks
    }

    /// Lines without their indentation, blank ones left out: snippets are indented as their place in the file needs.
    static func normalized(_ lines: [String]) -> [String] {
        lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    @Test("Every Swift snippet of the guide, of the DocC catalog an app reads and of the doc comments it shows is compiled, word for word",
          arguments: documents + documentedSources)
    func snippetsCompile(document: String) throws {
        let source = try String(contentsOfFile: Self.root + "/Tests/ShareQueueTests/Guide/GuideSnippets.swift", encoding: .utf8)
        let file = Self.normalized(source.components(separatedBy: "\n"))
        let imports = Set(file.filter { $0.hasPrefix("import ") })
        let snippets = try Self.snippets(of: document)
        #expect(!snippets.isEmpty)
        for snippet in snippets {
            let lines = Self.normalized(snippet)
            // An import is the file's own, at its top; the rest must stand together in the file.
            for line in lines where line.hasPrefix("import ") && line != "import PackageDescription" { #expect(imports.contains(line), "\(document): \(line)") }
            let code = lines.filter { !$0.hasPrefix("import ") && !$0.hasPrefix("// swift-tools-version") }
            guard !code.isEmpty else { continue }
            let found = (0...max(0, file.count - code.count)).contains { start in Array(file[start..<min(file.count, start + code.count)]) == code }
            #expect(found, "\(document): this snippet is not in GuideSnippets.swift as it stands:\n\(snippet.joined(separator: "\n"))")
        }
    }

    @Test("The guide's extension appends, and its main-actor model, its blocking forms and its loop take what was appended")
    func hostTakesWhatTheExtensionShares() async throws {
        let scratch = TemporaryDirectory()
        let dir = scratch.queue
        let url = URL(string: "https://swift.org")!
        let id = try await GuideExtension.share(dir: dir, url: url, title: "Swift", tags: ["lang"], note: nil)
        let appender = try QueueAppender(directory: QueueDirectory(path: dir))
        #expect(try await GuideExtension.publish(appender, name: "Dunes", sha256: nil))
        #expect(try await !GuideExtension.publish(appender, name: "Dunes", sha256: nil))
        let model = await InboxModel(drainer: try QueueDrainer(directory: QueueDirectory(path: dir)))
        let summary = try await model.refresh()
        #expect(summary.delivered == 2)
        #expect(await model.links[id]?.url == url)
        #expect(await model.wallpaper?.name == "Dunes")

        let link = SharedLink(url: url, title: "Swift", sharedAt: Date(), tags: [], note: nil)
        let image = scratch.file("image.jpg")
        try Data("image".utf8).write(to: URL(fileURLWithPath: image))
        let ids = try await GuideExtension.shareSeveral(appender, links: [link, link], link: link, imageURL: URL(fileURLWithPath: image))
        let drainer = try QueueDrainer(directory: QueueDirectory(path: dir))
        let photos = URL(fileURLWithPath: scratch.file("photos"))
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        let database = LinkDatabase()
        #expect(try await model.refreshIntoDatabase(database, photos: photos).isEmpty)
        #expect(await Set(database.saved.keys) == Set(ids))

        try await appender.append(contentsOf: [link, link], source: "s")
        #expect(try GuideHost.countLinks(drainer) == 2)
        try await appender.append(contentsOf: [link], source: "s")
        #expect(try await GuideHost.loop(drainer).count == 1)
        #expect(try await GuideHost.overview(queue: QueueDirectory(path: dir), url: url, title: "Swift").map(\.url) == [url])
        await model.refreshNow()
    }

    @Test("The guide's loop drains on every change notice until its task is cancelled; its plain records drain as they are")
    func loopAndPlainRecords() async throws {
        let scratch = TemporaryDirectory()
        let queue = try QueueDirectory(path: scratch.queue)
        let model = await InboxModel(drainer: try QueueDrainer(directory: queue))
        let running = Task { try await model.drainWhileRunning(queue) }
        let appender = try QueueAppender(directory: queue)
        let link = SharedLink(url: URL(string: "https://swift.org")!, title: "Swift", sharedAt: Date(), tags: [], note: nil)
        let id = try await appender.append(link, source: "s")
        try await waitUntil("the link appended while it runs") { await model.links[id] != nil }
        running.cancel()
        try await running.value
        #expect(try GuidePlainRecords.run(containerPath: scratch.file("container")).delivered == 2)
    }

    @Test("The guide's values of a type that is not SharedContent go in and out under the kind both sides name; a store's own error keeps its batch queued")
    func explicitKindsAndStoreErrors() async throws {
        let scratch = TemporaryDirectory()
        let queue = try QueueDirectory(path: scratch.queue)
        let appender = try QueueAppender(directory: queue)
        try await GuideKinds.share(appender, bookmark: Bookmark(title: "Swift"))
        var kinds: [Record.Kind] = []
        try QueueInspector(directory: queue).forEachPending { kinds.append($0.record.kind) }
        #expect(kinds == ["bookmark"])
        #expect(try GuideKinds.take(QueueDrainer(directory: queue)) == [Bookmark(title: "Swift")])

        let link = SharedLink(url: URL(string: "https://swift.org")!, title: "Swift", sharedAt: Date(), tags: [], note: nil)
        let id = try await appender.append(link, source: "s")
        let store = LinkStore()
        store.offline = true
        try await GuideErrors.drain(QueueDrainer(directory: queue), into: store)
        #expect(store.saved.isEmpty)
        #expect(try QueueInspector(directory: queue).status().pending == 1)
        store.offline = false
        try await GuideErrors.drain(QueueDrainer(directory: queue), into: store)
        #expect(store.saved[id]?.url == link.url)   // the date comes back to the millisecond
    }

    /// Waits until `condition` holds, checking every 10 ms, failing after 30 seconds.
    func waitUntil(_ what: String, _ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while await !condition() {
            guard ContinuousClock.now < deadline else { throw GuideTimeout(what: what) }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    struct GuideTimeout: Error { let what: String }
}
