import ShareQueue
import ShareQueueSystem

/// `share-stress power-cut-typed append DIR TEXT...` and `power-cut-typed drain DIR`:
/// what an app and its extension do through the library, so that the power-cut
/// explorer traces the typed append and a `ContentRouter` drain as it traces the tools.
/// The append prints each id once `append` returned it; the drain prints the ids its
/// handlers received, one a line, and marks them delivered for the explorer.
enum TypedProgram {
    /// A link an extension shares; its kind is declared, as every shared type's should be.
    struct SharedLink: Codable, SharedContent {
        static let contentKind: Record.Kind = "link"
        var title: String
    }

    /// A note, a second kind for the router.
    struct SharedNote: Codable, SharedContent {
        static let contentKind: Record.Kind = "note"
        var text: String
    }

    static func main() -> Never {
        let arguments = Array(CommandLine.arguments.dropFirst(2))
        guard arguments.count >= 2, ["append", "drain"].contains(arguments[0]) else {
            PowerCutCommand.emit("usage: share-stress power-cut-typed append DIR TEXT... | drain DIR")
            Host.exit(64)
        }
        do {
            let queue = try QueueDirectory(path: arguments[1])
            if arguments[0] == "append" {
                let appender = try QueueAppender(directory: queue)
                for (index, text) in arguments.dropFirst(2).enumerated() {
                    // Links and notes in turn, so that the router has two kinds to route.
                    let id = index % 2 == 0 ? try appender.append(SharedLink(title: text), source: "typed")
                        : try appender.append(SharedNote(text: text), source: "typed")
                    SystemTrace.current?.mark(["printed", id])
                    PowerCutCommand.emit(id)
                }
            } else {
                var router = ContentRouter()
                router.on(SharedLink.self) { links in deliver(links.map(\.id)) }
                router.on(SharedNote.self) { notes in deliver(notes.map(\.id)) }
                try QueueDrainer(directory: queue).drain(into: &router)
            }
            Host.exit(0)
        } catch {
            PowerCutCommand.emit("error: \(error)")
            Host.exit(75)
        }
    }

    /// Prints a handler's ids; from here on the app holds them.
    private static func deliver(_ ids: [String]) {
        SystemTrace.current?.mark(["delivered"] + ids)
        for id in ids { PowerCutCommand.emit(id) }
    }
}
