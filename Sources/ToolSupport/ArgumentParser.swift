import ShareQueueCore

/// One option a tool accepts, for parsing and for `--help`.
package struct OptionSpec {
    /// The names, long one first: `["--quiet", "-q"]`.
    package let names: [String]
    /// The placeholder of the option's value, or nil for a flag.
    package let value: String?
    package let help: String
    package let repeatable: Bool
    /// What the value is, for shell completion; by default read from the placeholder (see `ValueKind`).
    package let kind: ValueKind
    /// Left out of `--help`, the man page and completions: the tools' own plumbing.
    package let hidden: Bool

    package var key: String { names[0] }

    package init(names: [String], value: String?, help: String, repeatable: Bool = false, kind: ValueKind? = nil, hidden: Bool = false) {
        self.names = names
        self.value = value
        self.help = help
        self.repeatable = repeatable
        self.kind = kind ?? ValueKind(placeholder: value)
        self.hidden = hidden
    }
}

/// The parsed command line: option values by long name, then the arguments.
package struct ParsedArguments {
    /// An option given, under its long name, with its value ("" for a flag).
    private struct GivenOption {
        let name: String
        let value: String
    }

    /// The options in the order given. A list, not a dictionary: a command line
    /// holds a handful, and a tool that appends once starts faster without the
    /// hashing a dictionary of strings sets up on first use.
    private var given: [GivenOption] = []
    package private(set) var arguments: [String] = []

    package func has(_ name: String) -> Bool { given.contains { $0.name == name } }
    package func value(_ name: String) -> String? { given.last { $0.name == name }?.value }
    package func all(_ name: String) -> [String] { given.filter { $0.name == name }.map(\.value) }

    /// A whole number option, within `range`. Not generic: a generic form, called
    /// from another module, makes its types' metadata at run time on every start.
    package func integer(_ name: String, in range: ClosedRange<Int64>) throws(ShareQueueError) -> Int64? {
        guard let text = value(name) else { return nil }
        guard let number = Int64(text), range.contains(number) else {
            throw ShareQueueError(.invalidArgument, "\(name) needs a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return number
    }

    /// A whole number option, within `range`.
    package func integer(_ name: String, in range: ClosedRange<Int>) throws(ShareQueueError) -> Int? {
        try integer(name, in: Int64(range.lowerBound)...Int64(range.upperBound)).map { Int($0) }
    }

    /// Parses `arguments`, the command line without the tool's name.
    /// `--name value`, `--name=value`, and `--` to end the options are understood.
    package init(_ commandLine: [String], options: [OptionSpec]) throws(ShareQueueError) {
        var index = 0
        var optionsEnded = false
        while index < commandLine.count {
            let word = commandLine[index]
            index += 1
            if optionsEnded || !word.hasPrefix("-") || word == "-" {
                arguments.append(word)
                continue
            }
            if word == "--" { optionsEnded = true; continue }
            var name = word
            var inlineValue: String? = nil
            if word.hasPrefix("--"), let equals = word.firstIndex(of: "=") {
                name = String(word[..<equals])
                inlineValue = String(word[word.index(after: equals)...])
            }
            guard let spec = options.first(where: { $0.names.contains(name) }) else {
                let guess = OptionSuggestion.nearest(to: name, among: options.filter { !$0.hidden }.flatMap(\.names))
                throw ShareQueueError(.invalidArgument, "unknown option '\(name)'" + (guess.map { "; did you mean '\($0)'?" } ?? ""))
            }
            if spec.value == nil {
                if inlineValue != nil { throw ShareQueueError(.invalidArgument, "\(spec.key) takes no value") }
                given.append(GivenOption(name: spec.key, value: ""))
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                guard index < commandLine.count else { throw ShareQueueError(.invalidArgument, "\(spec.key) needs a value (\(spec.value!))") }
                value = commandLine[index]
                index += 1
            }
            if !spec.repeatable, has(spec.key) { throw ShareQueueError(.invalidArgument, "\(spec.key) is given more than once") }
            given.append(GivenOption(name: spec.key, value: value))
        }
    }
}

/// The command line's words as given, refusing any that is not valid UTF-8
/// rather than letting it be silently replaced.
package func commandLineWords() throws(ShareQueueError) -> [String] {
    // Every program is given its name at least. Swift reads the words from /proc/self/cmdline
    // on Linux, so a process that may open no file more gets none; it must not run as if given none.
    guard CommandLine.argc >= 1 else {
        throw ShareQueueError(.resourceShortage, "cannot read the command line (from /proc/self/cmdline: no descriptor was free, or reading failed); nothing was done")
    }
    var words: [String] = []
    for index in 1..<Int(CommandLine.argc) {
        guard let pointer = CommandLine.unsafeArgv[index] else { continue }
        // From the C string itself: the generic `String(validating:as:)` costs a start-up far more.
        guard let word = String(validatingCString: pointer) else {
            throw ShareQueueError(.badData, "argument \(index) is not valid UTF-8")
        }
        words.append(word)
    }
    return words
}
