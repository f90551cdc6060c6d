import Foundation
import Testing
import ShareQueue

/// Which overload an app's call resolves to, checked by compiling small files against the
/// built library as an app compiles (Swift 6, `MemberImportVisibility`): a content type
/// declares its kind, and the compiler refuses the spellings that took a kind from a type's name.
@Suite("Kind declarations")
struct KindDeclarationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    /// What the compiler said about `source`: its exit status and its diagnostics, one a line.
    static func typecheck(_ source: String, in scratch: TemporaryDirectory) throws -> (status: Int32, diagnostics: [String]) {
        let file = scratch.file("App.swift")
        try source.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try run("/usr/bin/env", ["swiftc", "-typecheck", "-swift-version", "6", "-enable-upcoming-feature", "MemberImportVisibility",
                                              "-I", Executables.directory.appendingPathComponent("Modules").path,
                                              "-Xcc", "-fmodule-map-file=\(root)/Sources/CLinuxSystem/module.modulemap",
                                              "-Xcc", "-fmodule-map-file=\(root)/Sources/CChecksum/module.modulemap", file], in: scratch)
        let diagnostics = (result.output + result.stderr).split(separator: "\n").map(String.init)
            .filter { $0.contains("App.swift:") && ($0.contains(": error:") || $0.contains(": warning:")) }
        return (result.status, diagnostics)
    }

    static let preamble = """
        import Foundation
        import ShareQueue

        struct SharedLink: SharedContent, Sendable {
            static let contentKind: Record.Kind = "link"
            var url: URL
        }
        struct Bookmark: Codable, Sendable { var title: String }

        """

    @Test("A content type's appends, drains, router and batches, blocking and awaited, compile without a warning; in an async function each drain is the async one")
    func declaredKindsCompile() throws {
        let scratch = TemporaryDirectory()
        let source = Self.preamble + """
            func blocking(_ appender: QueueAppender, _ drainer: QueueDrainer, _ link: SharedLink, _ file: URL) throws {
                try appender.append(link, source: "s")
                try appender.append(link, source: "s", key: "k", meta: ["a": "b"])
                try appender.append(link, source: "s", attaching: [file])
                try appender.append(contentsOf: [link, link], source: "s")
                try appender.append(contentsOf: [link].lazy.map { $0 }, source: "s")
                try appender.appendIfChanged(link, source: "s", key: "k")
                try appender.append(Bookmark(title: "t"), kind: "bookmark", source: "s")
                _ = try RecordDraft(encoding: link, source: "s")
                _ = try RecordDraft(encoding: Bookmark(title: "t"), kind: "bookmark", source: "s")
                _ = Record.Kind(for: SharedLink.self)
                var count = 0
                try drainer.drain(SharedLink.self) { count += $0.count }
                try drainer.drain(SharedLink.self, otherKinds: .setAside) { count += $0.count }
                try drainer.drain(Bookmark.self, kind: "bookmark") { count += $0.count }
                var inbox = ContentRouter()
                inbox.on(SharedLink.self) { count += $0.count }
                try drainer.drain(into: &inbox)
            }

            func awaited(_ appender: QueueAppender, _ drainer: QueueDrainer, _ link: SharedLink, _ file: URL) async throws {
                try await appender.append(link, source: "s")
                try await appender.append(link, source: "s", attaching: [file])
                try await appender.append(contentsOf: [link], source: "s")
                try await appender.appendIfChanged(link, source: "s", key: "k")
                try await appender.append(Bookmark(title: "t"), kind: "bookmark", source: "s")
                var count = 0
                try await drainer.drain(SharedLink.self) { count += $0.count }
                try await drainer.drain(SharedLink.self) { batch in try await Task.sleep(for: .zero); count += batch.count }
                try await drainer.drain(Bookmark.self, kind: "bookmark") { count += $0.count }
                try await drainer.drain(Bookmark.self, kind: "bookmark") { batch in try await Task.sleep(for: .zero); count += batch.count }
                var inbox = ContentRouter()
                inbox.on(SharedLink.self) { batch in try await Task.sleep(for: .zero); count += batch.count }
                try await drainer.drain(into: &inbox)
                for try await batch in drainer.batches(of: SharedLink.self) { count += batch.count }
                let existential: any SharedContent = link
                try await appender.append(existential, source: "s")
            }

            """
        let (status, diagnostics) = try Self.typecheck(source, in: scratch)
        #expect(status == 0 && diagnostics.isEmpty, "\(diagnostics.joined(separator: "\n"))")
    }

    @Test("Every spelling that filed a value under its type's name is refused with what to write instead; an array appended whole is one record per element, with a warning")
    func undeclaredKindsAreRefused() throws {
        let scratch = TemporaryDirectory()
        // Each call, one a line, and what the compiler must say about it.
        let calls: [(call: String, says: String)] = [
            ("try appender.append(bookmark, source: \"s\")", "error: 'append(_:source:key:meta:)' is unavailable: conform the type to SharedContent"),
            ("try appender.append(bookmark, source: \"s\", attaching: [file])", "error: 'append(_:source:key:meta:attaching:)' is unavailable"),
            ("try appender.append(contentsOf: [bookmark], source: \"s\")", "error: 'append(contentsOf:source:key:meta:)' is unavailable"),
            ("try appender.append([bookmark], source: \"s\")", "error: 'append(_:source:key:meta:)' is unavailable"),
            ("try appender.appendIfChanged(bookmark, source: \"s\", key: \"k\")", "error: 'appendIfChanged(_:source:key:meta:)' is unavailable"),
            ("_ = try RecordDraft(encoding: bookmark, source: \"s\")", "error: 'init(encoding:source:key:meta:id:attachments:)' is unavailable"),
            ("_ = Record.Kind(for: Bookmark.self)", "error: 'init(for:)' is unavailable"),
            ("try drainer.drain(Bookmark.self) { _ in }", "error: 'drain(_:otherKinds:_:)' is unavailable"),
            ("inbox.on(Bookmark.self) { _ in }", "error: 'on' is unavailable"),
            ("try appender.append([link], source: \"s\")", "warning: 'append(_:source:key:meta:)' is deprecated: an array is appended one record per element"),
        ]
        let asyncCalls: [(call: String, says: String)] = [
            ("try await appender.append(bookmark, source: \"s\")", "error: 'append(_:source:key:meta:)' is unavailable"),
            ("try await drainer.drain(Bookmark.self) { _ in }", "error: 'drain(_:otherKinds:isolation:_:)' is unavailable"),
            ("for try await _ in drainer.batches(of: Bookmark.self) {}", "error: 'batches(of:otherKinds:)' is unavailable"),
        ]
        let header = Self.preamble + """
            func blocking(_ appender: QueueAppender, _ drainer: QueueDrainer, _ bookmark: Bookmark, _ link: SharedLink, _ file: URL) throws {
                var inbox = ContentRouter()
                _ = inbox

            """
        let middle = "}\nfunc awaited(_ appender: QueueAppender, _ drainer: QueueDrainer, _ bookmark: Bookmark) async throws {\n"
        let firstLine = header.split(separator: "\n", omittingEmptySubsequences: false).count
        let source = header + calls.map(\.call).joined(separator: "\n") + "\n" + middle + asyncCalls.map(\.call).joined(separator: "\n") + "\n}\n"
        let (status, diagnostics) = try Self.typecheck(source, in: scratch)
        #expect(status != 0)
        let lines = calls.enumerated().map { (firstLine + $0.offset, $0.element) }
            + asyncCalls.enumerated().map { (firstLine + calls.count + 2 + $0.offset, $0.element) }
        for (line, (call, says)) in lines {
            let said = diagnostics.filter { $0.contains("App.swift:\(line):") }
            #expect(said.contains { $0.contains(says) }, "line \(line), \(call): the compiler said \(said), not \(says)")
            // The array of content values is appended, with a warning, one record per element: no error on its line.
            if says.hasPrefix("warning") { #expect(!said.contains { $0.contains(": error:") }, "\(call): \(said)") }
        }
    }
}
