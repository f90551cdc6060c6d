import ShareQueue
import ShareQueueSystem

/// What both tools share: help, version, the queue directory, errors and exit codes.
package struct Tool {
    package static let version = "0.1.0"

    package let name: String
    package let overview: String
    package let usage: String
    package let argumentsHelp: [(String, String)]
    package let options: [OptionSpec]

    package init(name: String, overview: String, usage: String, argumentsHelp: [(String, String)], options: [OptionSpec]) {
        self.name = name
        self.overview = overview
        self.usage = usage
        self.argumentsHelp = argumentsHelp
        self.options = options
    }

    package static let directoryOptions = [
        OptionSpec(names: ["--dir"], value: "DIR",
                   help: "The queue directory. Defaults to $SHARE_QUEUE_DIR, else the per-user default (see --group)."),
        OptionSpec(names: ["--group"], value: "ID",
                   help: "Use the container ID under the per-user default base, like an App Group identifier."),
    ]
    package static let commonOptions = [
        OptionSpec(names: ["--help", "-h"], value: nil, help: "Show this help and exit."),
        OptionSpec(names: ["--version"], value: nil, help: "Show the version and the queue format, and exit."),
    ]

    package var help: String {
        var text = "OVERVIEW: \(overview)\n\nUSAGE: \(usage)\n"
        if !argumentsHelp.isEmpty {
            text += "\nARGUMENTS:\n"
            for (name, help) in argumentsHelp { text += "  \(name.padding(to: 26))\(help)\n" }
        }
        text += "\nOPTIONS:\n"
        for option in options {
            var label = option.names.reversed().joined(separator: ", ")
            if let value = option.value { label += " <\(value)>" }
            if label.count >= 25 {
                text += "  \(label)\n  \(String().padding(to: 26))\(option.help)\n"
            } else {
                text += "  \(label.padding(to: 26))\(option.help)\n"
            }
        }
        return text
    }

    /// Parses the command line, answering `--help` and `--version` itself.
    package func parse() -> ParsedArguments {
        do {
            let parsed = try ParsedArguments(try commandLineWords(), options: options)
            if parsed.has("--help") { print(help); Host.exit(0) }
            if parsed.has("--version") { print("\(name) \(Tool.version) (queue format \(QueueDirectory.formatVersion))"); Host.exit(0) }
            return parsed
        } catch {
            fail(error)
        }
    }

    /// The queue directory from `--dir`, `SHARE_QUEUE_DIR` or the default; never a silent fallback.
    package func directoryPath(_ arguments: ParsedArguments) throws(ShareQueueError) -> String {
        if let dir = arguments.value("--dir") {
            if arguments.has("--group") { throw ShareQueueError(.invalidArgument, "give --dir or --group, not both") }
            guard !dir.isEmpty else { throw ShareQueueError(.invalidArgument, "--dir needs a path") }
            return dir
        }
        if let group = arguments.value("--group") { return try QueueDirectory.defaultPath(group: group) }
        if let dir = Host.environment("SHARE_QUEUE_DIR") {
            guard !dir.isEmpty else { throw ShareQueueError(.configuration, "SHARE_QUEUE_DIR is set but empty") }
            return dir
        }
        return try QueueDirectory.defaultPath(group: nil)
    }

    /// Prints `<tool>: error: ...` (and the usage line for a usage error) and exits with its sysexits code.
    package func fail(_ error: ShareQueueError) -> Never {
        var text = "\(name): error: \(error)\n"
        if error.kind == .invalidArgument { text += "USAGE: \(usage)\n  See '\(name) --help'.\n" }
        printError(text)
        Host.exit(Self.exitCode(error.kind))
    }

    package func warn(_ message: String) { printError("\(name): warning: \(message)\n") }

    package func printError(_ text: String) { try? FileDescriptor.standardError.writeAll(Array(text.utf8)) }

    /// The sysexits code for each kind of failure: the one place the tools map kinds to exit codes.
    package static func exitCode(_ kind: ShareQueueError.Kind) -> Int32 {
        switch kind {
        case .invalidArgument: return 64  // EX_USAGE
        case .badData: return 65  // EX_DATAERR
        case .noInput: return 66  // EX_NOINPUT
        case .cannotCreate: return 73  // EX_CANTCREAT
        case .ioError: return 74  // EX_IOERR
        case .tryAgain: return 75  // EX_TEMPFAIL
        case .permissionDenied: return 77  // EX_NOPERM
        case .configuration: return 78  // EX_CONFIG
        default: return 70  // EX_SOFTWARE: a kind newer than this table
        }
    }
}

extension String {
    package func padding(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
