import Foundation
import Testing
@testable import ShareQueueCore

/// `Samples/SharingApp`, the share extension and host app the library guide shows, is a
/// package of its own: built here from scratch (into its own `.build`, which
/// git ignores; a later run only checks that it is up to date) and run end to end.
@Suite("Sharing app sample")
struct SharingAppTests {
    static let package = ServiceSampleTests.samples + "/SharingApp"

    /// The folder of the sample's programs, built once per test run.
    static let built = build(package)

    /// Builds a sample package into its own `.build`; returns the folder of its programs.
    /// The build plan is made afresh each time: a plan kept from an earlier build still
    /// names the library's source files as they were then, and one since removed
    /// fails the build with "missing inputs".
    static func build(_ package: String) -> Result<String, SampleBuildFailed> {
        let scratch = TemporaryDirectory()
        do {
            let build = try run("/usr/bin/env", ["swift", "build", "--package-path", package, "--disable-build-manifest-caching"], in: scratch)
            guard build.status == 0 else { return .failure(SampleBuildFailed(output: build.output + build.stderr)) }
            return .success(package + "/.build/debug")
        } catch {
            return .failure(SampleBuildFailed(output: "\(error)"))
        }
    }

    struct SampleBuildFailed: Error, CustomStringConvertible {
        let output: String
        var description: String { "swift build of the sample failed:\n\(output)" }
    }

    /// A link as the extension is given it, and as the host must store it.
    struct Link {
        let url: String
        let title: String
        var tags: [String] = []
        var note: String? = nil

        var arguments: [String] {
            ["link", url, title] + tags.flatMap { ["--tag", $0] } + (note.map { ["--note", $0] } ?? [])
        }
    }

    static let links = [
        Link(url: "https://swift.org/blog/", title: "Swift Blog", tags: ["lang", "news"], note: "read later"),
        Link(url: "https://example.com/a?b=1&c=2#frag", title: "Café ☕ — \"quoted\"\nsecond line"),
        Link(url: "https://example.org/", title: "Example", tags: ["x"]),
    ]

    /// The kind of every pending record, in queue order.
    func pendingKinds(_ queue: String) throws -> [String] {
        var kinds: [String] = []
        try QueueInspector(directory: QueueDirectory(path: queue)).forEachPending { kinds.append($0.record.kind.rawValue) }
        return kinds
    }

    func share(_ bin: String, _ queue: String, _ arguments: [String], in scratch: TemporaryDirectory) throws -> ProcessResult {
        let result = try run(bin + "/ShareExtension", ["--dir", queue] + arguments, in: scratch)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        #expect(result.lines.count == 1 && RecordID.isValid(result.lines[0]), "\(result.output)")
        return result
    }

    func host(_ bin: String, _ arguments: [String], in scratch: TemporaryDirectory) throws -> String {
        let result = try run(bin + "/HostApp", arguments, in: scratch)
        #expect(result.status == 0, "\(result.stderr)")
        return result.output
    }

    @Test("Extensions share links, some at once, and publish the wallpaper; the host stores each link once, however often it drains")
    func endToEnd() throws {
        let bin = try Self.built.get()
        let scratch = TemporaryDirectory()
        let queue = scratch.queue
        let store = scratch.file("links.json")
        let start = Date().timeIntervalSince1970 * 1000

        var expected: [String: Link] = [:]
        for link in Self.links { expected[try share(bin, queue, link.arguments, in: scratch).lines[0]] = link }
        let atOnce = (1...4).map { Link(url: "https://example.net/item/\($0)", title: "At once \($0)", tags: ["c\($0)"]) }
        let running = try atOnce.map { try RunningTool(bin + "/ShareExtension", ["--dir", queue] + $0.arguments, in: scratch) }
        for (link, tool) in zip(atOnce, running) {
            let result = tool.wait()
            #expect(result.status == 0, "\(result.stderr)")
            expected[result.lines.first ?? ""] = link
        }
        let end = Date().timeIntervalSince1970 * 1000
        #expect(expected.count == 7 && expected[""] == nil)

        // The same wallpaper twice, then a new one.
        let sha = String(repeating: "ab", count: 32)
        let dunes = try share(bin, queue, ["wallpaper", "Dunes"], in: scratch)
        let unchanged = try share(bin, queue, ["wallpaper", "Dunes"], in: scratch)
        _ = try share(bin, queue, ["wallpaper", "Forest", "--sha256", sha], in: scratch)
        let kinds = try pendingKinds(queue)
        #expect(kinds.filter { $0 == "link" }.count == 7)
        // The unchanged publish appended nothing and printed the first one's id.
        #expect(kinds.filter { $0 == "current-wallpaper" }.count == 2)
        #expect(unchanged.stderr == "ShareExtension: unchanged, nothing appended\n")
        #expect(unchanged.output == dunes.output)
        let superseded = 1

        // What a drain killed before its checkpoint would deliver again.
        let copy = scratch.file("queue-before-drain")
        try FileManager.default.copyItem(atPath: queue, toPath: copy)

        #expect(try host(bin, ["--dir", queue, "--store", store], in: scratch)
                == "HostApp: 8 delivered, 7 new links, 7 stored, wallpaper Forest, \(superseded) superseded, 0 dead-lettered\n")
        let saved = try Data(contentsOf: URL(fileURLWithPath: store))
        let contents = try #require(try JSONSerialization.jsonObject(with: saved) as? [String: Any])
        #expect(Set(contents.keys) == ["links", "files", "wallpaper"])
        #expect((contents["files"] as? [String: Any])?.isEmpty == true)
        #expect(contents["wallpaper"] as? [String: String] == ["name": "Forest", "imageSHA256": sha])
        let links = try #require(contents["links"] as? [String: [String: Any]])
        #expect(Set(links.keys) == Set(expected.keys))
        for (id, link) in expected {
            let stored = try #require(links[id])
            #expect(Set(stored.keys) == Set(["url", "title", "sharedAt", "tags"] + (link.note == nil ? [] : ["note"])))
            #expect(stored["url"] as? String == link.url)
            #expect(stored["title"] as? String == link.title)
            #expect(stored["tags"] as? [String] == link.tags)
            #expect(stored["note"] as? String == link.note)
            let sharedAt = try #require((stored["sharedAt"] as? NSNumber)?.doubleValue)
            #expect(sharedAt >= start.rounded(.down) && sharedAt <= end, "\(sharedAt) not in \(start)...\(end)")
        }

        // Nothing new: nothing delivered, the store untouched.
        #expect(try host(bin, ["--dir", queue, "--store", store], in: scratch)
                == "HostApp: 0 delivered, 0 new links, 7 stored, wallpaper Forest, 0 superseded, 0 dead-lettered\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == saved)
        // Everything delivered again: no duplicates, the store untouched.
        #expect(try host(bin, ["--dir", copy, "--store", store], in: scratch)
                == "HostApp: 8 delivered, 0 new links, 7 stored, wallpaper Forest, \(superseded) superseded, 0 dead-lettered\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == saved)
    }

    @Test("A typed drain of links stops at the wallpaper and moves nothing; the host's drain of several types takes all")
    func typedDrainStopsAtOtherKinds() throws {
        let bin = try Self.built.get()
        let scratch = TemporaryDirectory()
        let queue = scratch.queue
        let store = scratch.file("links.json")
        _ = try share(bin, queue, Self.links[0].arguments, in: scratch)
        _ = try share(bin, queue, ["wallpaper", "Dunes"], in: scratch)
        _ = try share(bin, queue, Self.links[2].arguments, in: scratch)

        for _ in 1...2 {
            let linksOnly = try run(bin + "/HostApp", ["--dir", queue, "--store", store, "--links-only"], in: scratch)
            #expect(linksOnly.status == 78, "\(linksOnly.stderr)")
            #expect(linksOnly.stderr.contains("a record of kind 'current-wallpaper'"), "\(linksOnly.stderr)")
            #expect(try pendingKinds(queue) == ["link", "current-wallpaper", "link"])
            #expect(!FileManager.default.fileExists(atPath: queue + "/dead-letters.log"))
        }
        #expect(try host(bin, ["--dir", queue, "--store", store], in: scratch)
                == "HostApp: 3 delivered, 2 new links, 2 stored, wallpaper Dunes, 0 superseded, 0 dead-lettered\n")
    }

    @Test("A drain cancelled by the expiration handler stops after the batch in hand; the next run takes the rest once")
    func expiration() throws {
        let bin = try Self.built.get()
        let scratch = TemporaryDirectory()
        let queue = scratch.queue
        let store = scratch.file("links.json")
        for number in 1...5 {
            _ = try share(bin, queue, ["link", "https://example.com/\(number)", "Link \(number)"], in: scratch)
        }
        #expect(try host(bin, ["--dir", queue, "--store", store, "--batch-size", "2", "--expire-after-batches", "1"], in: scratch)
                == "HostApp: 2 delivered, 2 new links, 2 stored, wallpaper none, 0 superseded, 0 dead-lettered, stopped\n")
        #expect(try pendingKinds(queue).count == 3)
        #expect(try host(bin, ["--dir", queue, "--store", store, "--batch-size", "2"], in: scratch)
                == "HostApp: 3 delivered, 3 new links, 5 stored, wallpaper none, 0 superseded, 0 dead-lettered\n")
    }

    @Test("A running host drains on every change notice: links shared while it runs reach its store")
    func drainsWhileRunning() throws {
        let bin = try Self.built.get()
        let scratch = TemporaryDirectory()
        let queue = scratch.queue
        let store = scratch.file("links.json")
        _ = try share(bin, queue, Self.links[0].arguments, in: scratch)
        let host = try RunningTool(bin + "/HostApp", ["--dir", queue, "--store", store, "--watch-until-links", "3"], in: scratch)
        defer { host.kill() }
        // The link queued before it began is taken on the first notice, at once.
        try waitUntil("the link queued before the host began", seconds: 30) {
            (try? Data(contentsOf: URL(fileURLWithPath: store)))?.isEmpty == false
        }
        _ = try share(bin, queue, Self.links[1].arguments, in: scratch)
        _ = try share(bin, queue, Self.links[2].arguments, in: scratch)
        let result = host.wait()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.output.hasPrefix("HostApp: ") && result.output.contains(", 3 new links, 3 stored, "), "\(result.output)")
        #expect(try pendingKinds(queue).isEmpty)
    }

    @Test("Files shared with a link become the host's: kept beside its store, and no longer in the queue")
    func attachments() throws {
        let bin = try Self.built.get()
        let scratch = TemporaryDirectory()
        let queue = scratch.queue
        let store = scratch.file("links.json")
        let photo = scratch.file("preview.jpg")
        try Data("a preview".utf8).write(to: URL(fileURLWithPath: photo))
        let id = try share(bin, queue, Self.links[2].arguments + ["--attach", photo], in: scratch).lines[0]
        #expect(try host(bin, ["--dir", queue, "--store", store], in: scratch)
                == "HostApp: 1 delivered, 1 new links, 1 stored, wallpaper none, 0 superseded, 0 dead-lettered\n")
        let contents = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: store))) as? [String: Any])
        #expect(contents["files"] as? [String: [String]] == [id: [id + "-preview.jpg"]])
        #expect(try String(contentsOfFile: store + ".files/" + id + "-preview.jpg", encoding: .utf8) == "a preview")
        // Neither the queue nor the folder the drain delivered to keeps a copy; the original is untouched.
        #expect(try FileManager.default.contentsOfDirectory(atPath: queue + "/attachments").isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: queue + ".attachments").isEmpty)
        #expect(FileManager.default.fileExists(atPath: photo))
    }

    @Test("The sample's app code holds no lock and no @unchecked Sendable")
    func noLocks() throws {
        let sources = try #require(FileManager.default.enumerator(atPath: Self.package + "/Sources")?.allObjects as? [String])
        for file in sources where file.hasSuffix(".swift") {
            let text = try String(contentsOfFile: Self.package + "/Sources/" + file, encoding: .utf8)
            for word in ["@unchecked", "NSLock", "Mutex", "DispatchSemaphore", "withLock"] {
                #expect(!text.contains(word), "\(file) has \(word)")
            }
        }
    }

    @Test("The sample is built as an outside app: Swift 6 mode, member imports checked, and only import ShareQueue")
    func outsideApp() throws {
        _ = try Self.built.get()
        let manifest = try String(contentsOfFile: Self.package + "/Package.swift", encoding: .utf8)
        #expect(manifest.contains("swiftLanguageModes: [.v6]") && manifest.contains(#".enableUpcomingFeature("MemberImportVisibility")"#))
        let sources = try #require(FileManager.default.enumerator(atPath: Self.package + "/Sources")?.allObjects as? [String])
        var imports: Set<String> = []
        for file in sources where file.hasSuffix(".swift") {
            let text = try String(contentsOfFile: Self.package + "/Sources/" + file, encoding: .utf8)
            for line in text.split(separator: "\n") where line.hasPrefix("import ") { imports.insert(String(line)) }
        }
        #expect(imports == ["import Foundation", "import ShareQueue", "import SharedTypes"])
    }

    @Test("The sample's programs exit 64 on a usage error and 78 on a queue in a newer format")
    func exitStatuses() throws {
        let bin = try Self.built.get()
        let scratch = TemporaryDirectory()
        let queue = scratch.queue
        for arguments in [["--dir", queue], ["--dir", queue, "link", "not a url", "Title"], ["link", "https://swift.org", "Swift"]] {
            let result = try run(bin + "/ShareExtension", arguments, in: scratch)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.output.isEmpty && result.stderr.hasPrefix("ShareExtension: error: "), "\(result.stderr)")
        }
        #expect(try run(bin + "/HostApp", ["--dir", queue], in: scratch).status == 64)

        try FileManager.default.createDirectory(atPath: queue, withIntermediateDirectories: true)
        try Data("ShareQueue queue format 99\n".utf8).write(to: URL(fileURLWithPath: queue + "/format"))
        let append = try run(bin + "/ShareExtension", ["--dir", queue, "wallpaper", "Dunes"], in: scratch)
        #expect(append.status == 78, "\(append.stderr)")
        #expect(append.stderr.contains("newer than the 1 this version understands"))
        let drain = try run(bin + "/HostApp", ["--dir", queue, "--store", scratch.file("links.json")], in: scratch)
        #expect(drain.status == 78, "\(drain.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("links.json")))
    }
}
