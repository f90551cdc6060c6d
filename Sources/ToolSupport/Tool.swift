import ShareQueueCore
import ShareQueueSystem

/// What both tools share: help, version, the queue directory, errors and exit codes.
package struct Tool {
    package static let version = "0.1.0"

    package let name: String
    package let overview: String
    package let usage: String
    package let options: [OptionSpec]
    /// What only help, the man page and completions read, made when they ask: a
    /// tool that appends once then never builds these tables of text.
    private let documentation: @Sendable () -> Documentation

    /// The arguments after the options, and what each is.
    package var argumentsHelp: [(String, String)] { documentation().argumentsHelp }
    /// Command lines with what they do, at the end of `--help` and in the man page.
    package var examples: [Example] { documentation().examples }
    /// The man page's ENVIRONMENT, FILES and EXIT STATUS: name or code, then what it means.
    package var environment: [(String, String)] { documentation().environment }
    package var files: [(String, String)] { documentation().files }
    package var exitCodes: [(String, String)] { documentation().exitCodes }

    private struct Documentation {
        let argumentsHelp: [(String, String)]
        let examples: [Example]
        let environment: [(String, String)]
        let files: [(String, String)]
        let exitCodes: [(String, String)]
    }

    package struct Example {
        package let purpose: String
        package let command: String
        package init(_ purpose: String, _ command: String) { self.purpose = purpose; self.command = command }
    }

    package init(name: String, overview: String, usage: String, argumentsHelp: @autoclosure @escaping @Sendable () -> [(String, String)],
                 options: [OptionSpec], examples: @autoclosure @escaping @Sendable () -> [Example] = [],
                 environment: @autoclosure @escaping @Sendable () -> [(String, String)] = [],
                 files: @autoclosure @escaping @Sendable () -> [(String, String)] = [],
                 exitCodes: @autoclosure @escaping @Sendable () -> [(String, String)] = Tool.standardExitCodes) {
        self.name = name
        self.overview = overview
        self.usage = usage
        self.options = options
        documentation = {
            Documentation(argumentsHelp: argumentsHelp(), examples: examples(), environment: environment(), files: files(), exitCodes: exitCodes())
        }
    }

    package static let directoryOptions = [
        OptionSpec(names: ["--dir"], value: "DIR",
                   help: "The queue directory. Defaults to $SHARE_QUEUE_DIR, else the per-user default (see --group)."),
        OptionSpec(names: ["--group"], value: "ID",
                   help: "Use the container ID under the per-user default base, like an App Group identifier."),
    ]
    /// The man page's ENVIRONMENT and FILES for the tools that use a queue.
    package static let queueEnvironment = [
        ("SHARE_QUEUE_DIR", "The queue directory when --dir and --group are not given. Set but empty, or not UTF-8, it is an error."),
        ("XDG_DATA_HOME", "On Linux, the base of the per-user default: $XDG_DATA_HOME/ShareQueue/default (else ~/.local/share/ShareQueue/default)."),
        ("HOME", "The base of the per-user default when XDG_DATA_HOME is not set; without it there is no default directory."),
    ]
    package static let queueFiles = [
        ("DIR/pending.log", "The records appended and not yet delivered, framed with a length and a checksum."),
        ("DIR/quarantine.log", "Damaged data set aside by a drain, one JSON object a line."),
        ("DIR/attachments/", "Files attached to records, until they are delivered or moved."),
        ("DIR/dead-letters.log", "Records a command refused --max-attempts times."),
        ("~/.local/share/ShareQueue/default", "The per-user default queue on Linux; ~/Library/Application Support/ShareQueue/default on macOS."),
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
        for option in options where !option.hidden {
            var label = option.names.reversed().joined(separator: ", ")
            if let value = option.value { label += " <\(value)>" }
            if label.count >= 25 {
                text += "  \(label)\n  \(String().padding(to: 26))\(option.help)\n"
            } else {
                text += "  \(label.padding(to: 26))\(option.help)\n"
            }
        }
        if !examples.isEmpty {
            text += "\nEXAMPLES:\n"
            for example in examples { text += "  \(example.purpose)\n    \(example.command)\n" }
        }
        return text
    }

    /// What every tool answers besides its own options, as swift-argument-parser spells them.
    static let generatorOptions = [
        OptionSpec(names: ["--generate-completion-script"], value: "SHELL", help: "Print a completion script for bash, zsh or fish.", hidden: true),
        OptionSpec(names: ["--help-man"], value: nil, help: "Print the man page.", hidden: true),
    ]

    /// Parses the command line, answering `--help`, `--version`, `--help-man`
    /// and `--generate-completion-script` itself.
    package func parse() -> ParsedArguments {
        do throws(ShareQueueError) {
            let parsed = try ParsedArguments(try commandLineWords(), options: options + Self.generatorOptions)
            if parsed.has("--help") { print(help); Host.exit(0) }
            if parsed.has("--help-man") { print(manPage, terminator: ""); Host.exit(0) }
            if let shell = parsed.value("--generate-completion-script") { print(try completionScript(for: shell), terminator: ""); Host.exit(0) }
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
        if let dir = try QueueDirectory.pathVariable("SHARE_QUEUE_DIR") {
            guard !dir.isEmpty else { throw ShareQueueError(.configuration, "SHARE_QUEUE_DIR is set but empty") }
            return dir
        }
        return try QueueDirectory.defaultPath(group: nil)
    }

    /// Prints `<tool>: error: ...` (and the usage line for a usage error) and exits with its sysexits code.
    package func fail(_ error: ShareQueueError) -> Never {
        var text = "\(name): error: \(TerminalText.shown("\(error)"[...]))\n"
        if error.code == .invalidArgument { text += "USAGE: \(usage)\n  See '\(name) --help'.\n" }
        printError(text)
        Host.exit(Self.exitCode(error))
    }

    /// Prints `<tool>: warning: ...`, the message on one line with what a terminal would act on escaped.
    package func warn(_ message: String) { printError("\(name): warning: \(TerminalText.shown(message[...]))\n") }

    /// Prints an event of a drain or a look at a queue as a warning, in the words its description gives.
    package func warn(_ event: QueueEvent) { warn(event.description) }

    package func printError(_ text: String) { try? FileDescriptor.standardError.writeAll(Array(text.utf8)) }

    /// What each exit code means, for the man page; the codes are `exitCode(_:)`'s.
    package static let standardExitCodes = [
        ("0", "Done."),
        ("64", "Usage: an unknown option, a missing or malformed value."),
        ("65", "Bad data: invalid UTF-8, invalid JSON under --json, a record too large."),
        ("66", "No input: empty input, or an attachment that does not exist."),
        ("73", "Cannot create the queue directory or one of its files."),
        ("74", "I/O error, a full disk included; a drain that could not read or write a file of the queue keeps its records."),
        ("75", "Try again later: another drain is running, a lock was held past its wait, the queue is full, the sink failed (an --exec command ended by a signal that is neither a stop nor a crash included), or the system ran short of descriptors or memory (EMFILE, ENFILE, ENOMEM, EAGAIN, a signal storm)."),
        ("77", "Permission denied."),
        ("78", "Format or configuration problem: a queue in a newer format, a file planted where the queue's own should be, no default directory, an --exec command that is broken (it exits 64, 78, 126 or 127)."),
    ]

    /// The sysexits code for a failure: the one place the tools map what happened to an exit status.
    package static func exitCode(_ error: ShareQueueError) -> Int32 {
        switch error.code {
        case .invalidArgument: return 64  // EX_USAGE
        case .badData: return 65  // EX_DATAERR
        case .noInput: return 66  // EX_NOINPUT
        case .cannotCreate: return 73  // EX_CANTCREAT
        case .ioError: return 74  // EX_IOERR
        // Nothing was lost and nothing needs fixing: run again later.
        case .busy, .queueFull, .handlerFailed, .sinkRefused, .nameTaken, .resourceShortage, .recordHeld: return 75  // EX_TEMPFAIL
        case .permissionDenied: return 77  // EX_NOPERM
        // What a tool cannot repair in the queue's setup: a newer format, a planted file, a format marker or store no version wrote.
        case .configuration, .damaged: return 78  // EX_CONFIG
        default: return 70  // EX_SOFTWARE: a code newer than this table
        }
    }

    /// Whether a tool that keeps running (host-drain --watch) tries `error` again later: a failure that
    /// comes back by itself or that a disk can clear (75, 74), rather than one someone has to fix.
    package static func isPassing(_ error: ShareQueueError) -> Bool {
        [74, 75].contains(exitCode(error))
    }

    /// An error a library call threw, as a tool reports it: a ``ShareQueueError`` as it is, and any other
    /// (a sink's own, which a drain rethrows as it is) as a sink that failed, which leaves its batch queued.
    package static func reported(_ error: any Error, _ message: String) -> ShareQueueError {
        (error as? ShareQueueError) ?? .handlerFailed(message, underlying: error)
    }
}

extension String {
    package func padding(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
