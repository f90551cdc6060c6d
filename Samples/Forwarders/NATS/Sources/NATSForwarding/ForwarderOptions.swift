/// How to reach the server and where the records go, from forward-nats's command line.
/// The option names follow the `nats` command-line tool's where it has one.
public struct ForwarderOptions: Sendable {
    /// The server's URL: `nats://HOST:PORT`, or `tls://HOST:PORT` for TLS.
    public var server = "nats://127.0.0.1:4222"
    /// The subject every record is published to.
    public var subject = ""
    /// The stream that must capture `subject`, checked before anything is published; nil for
    /// whichever stream captures it.
    public var stream: String? = nil
    /// Whether to make `stream` when it does not exist, and forward nothing: a step run once,
    /// by hand, never by host-drain, so that a stream deleted later is not made anew unnoticed.
    public var createsStream = false
    /// The duplicate window `stream` must have (and a stream made here gets), in seconds;
    /// nil for any (and the server's default, 2 minutes, for a stream made here).
    public var dupeWindow: Double? = nil
    /// How long to wait to connect, and for the acknowledgements after the last record, in seconds.
    public var timeout = 5.0
    /// A credentials file (a user JWT and its NKey seed).
    public var credentials: String? = nil
    /// The client certificate, for TLS.
    public var tlsCertificate: String? = nil
    /// The client certificate's private key.
    public var tlsKey: String? = nil
    /// The certificate authority that signed the server's certificate.
    public var tlsAuthority: String? = nil

    /// The defaults: the local server, no subject yet.
    public init() {}

    /// The option that named the stream, for messages that say what to change.
    var streamOption: String { createsStream ? "--create-stream" : "--stream" }

    /// Whether the connection uses TLS.
    var usesTLS: Bool {
        server.hasPrefix("tls://") || tlsCertificate != nil || tlsKey != nil || tlsAuthority != nil
    }
}

/// What a command line asks for.
public enum ForwarderCommand: Sendable {
    /// Print the help.
    case help
    /// Forward standard input with these options.
    case forward(ForwarderOptions)
}

extension ForwarderOptions {
    /// Parses forward-nats's arguments (without the program's name).
    /// - Throws: ``ForwardingFailure`` of kind `.usage` for an unknown option, a missing or malformed value.
    public static func parse(_ arguments: [String]) throws(ForwardingFailure) -> ForwarderCommand {
        var options = ForwarderOptions()
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "-h" || argument == "--help" { return .help }
            var name = argument
            var inlineValue: String? = nil
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() throws(ForwardingFailure) -> String {
                guard let given = inlineValue ?? remaining.popFirst(), !given.isEmpty else {
                    throw ForwardingFailure(.usage, "missing value for '\(name)'")
                }
                return given
            }
            switch name {
            case "-s", "--server": options.server = try value()
            case "--subject": options.subject = try value()
            case "--stream", "--create-stream":
                guard options.stream == nil else {
                    throw ForwardingFailure(.usage, "give one of --stream and --create-stream, once")
                }
                options.stream = try value()
                options.createsStream = name == "--create-stream"
            case "--dupe-window": options.dupeWindow = try seconds(try value(), for: name)
            case "--timeout": options.timeout = try seconds(try value(), for: name)
            case "--creds": options.credentials = try value()
            case "--tlscert": options.tlsCertificate = try value()
            case "--tlskey": options.tlsKey = try value()
            case "--tlsca": options.tlsAuthority = try value()
            default: throw ForwardingFailure(.usage, "unknown argument '\(argument)'")
            }
        }
        guard !options.subject.isEmpty else { throw ForwardingFailure(.usage, "missing --subject") }
        guard options.subject.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F }), !options.subject.hasSuffix("."),
              !options.subject.contains("*"), !options.subject.contains(">") else {
            throw ForwardingFailure(.usage, "'\(options.subject)' is not a subject to publish to")
        }
        guard options.timeout > 0 else { throw ForwardingFailure(.usage, "--timeout must be more than 0") }
        if let window = options.dupeWindow {
            guard options.stream != nil else { throw ForwardingFailure(.usage, "--dupe-window applies only to a stream named with --stream or --create-stream") }
            guard window > 0 else { throw ForwardingFailure(.usage, "--dupe-window must be more than 0") }
        }
        if (options.tlsCertificate == nil) != (options.tlsKey == nil) {
            throw ForwardingFailure(.usage, "--tlscert and --tlskey go together")
        }
        return .forward(options)
    }

    /// Checks that each file the options name can be read, before the client tries to.
    /// - Throws: ``ForwardingFailure`` of kind `.configuration`, naming the option and the file.
    func checkFiles() throws(ForwardingFailure) {
        let files = [("--creds", credentials), ("--tlscert", tlsCertificate), ("--tlskey", tlsKey), ("--tlsca", tlsAuthority)]
        for case let (option, path?) in files {
            if let reason = unreadableReason(path) {
                throw ForwardingFailure(.configuration, "cannot read the file of \(option) (\(path)): \(reason)")
            }
        }
    }

    /// `500ms`, `5s`, `2m`, `1h` or plain seconds, as the `nats` tool writes durations.
    static func seconds(_ text: String, for option: String) throws(ForwardingFailure) -> Double {
        let units: [(suffix: String, seconds: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        let unit = units.first { text.hasSuffix($0.suffix) } ?? ("", 1)
        guard let number = Double(text.dropLast(unit.suffix.count)), number.isFinite, number >= 0 else {
            throw ForwardingFailure(.usage, "\(option) takes a duration such as 500ms, 5s or 2m, not '\(text)'")
        }
        return number * unit.seconds
    }

    /// The usage line, printed with every usage error.
    public static let usage = "forward-nats --subject SUBJECT [--server URL] [--stream NAME | --create-stream NAME] [options]"

    /// What `--help` prints.
    public static let help = """
        OVERVIEW: Publish a batch of host-drain's records to a NATS JetStream subject, each once.

        Reads JSON Lines on standard input, as host-drain --exec gives them, publishes each line
        with the header Nats-Msg-Id set to the record's id, and waits for every acknowledgement.
        The stream drops a record it already holds under that id within its duplicate window,
        so a batch sent again after a lost answer is stored once.

        Run by host-drain --long-running, it is greeted with the line 'sharequeue-sink 1' instead
        of a record: it greets back once connected, then forwards batch after batch on that one
        connection, answering each 'delivered', or 'refused' for a record the server will never
        take; any other failure ends it with the exit status below, and the batch stays queued.

        Make the stream once, by hand, with --create-stream; name it in the command host-drain
        runs with --stream. Then a stream that is deleted stops the drain (78) instead of being
        made anew, empty: the records forwarded to it went with it, and the queue, which had
        them acknowledged, no longer holds them. Run --create-stream again to make it anew.

        USAGE: \(usage)

        OPTIONS:
          -s, --server URL        The server to connect to (default nats://127.0.0.1:4222; tls://HOST:PORT for TLS).
          --subject SUBJECT       The subject to publish every record to; a stream must capture it.
          --stream NAME           The stream that must capture SUBJECT: checked before each batch, never made.
          --create-stream NAME    Make the stream NAME, capturing SUBJECT, unless it exists, and forward nothing (run it once, by hand).
          --dupe-window DURATION  The duplicate window the stream must have (--stream), or gets (--create-stream; default 2m).
          --timeout DURATION      How long to wait to connect, and for acknowledgements after the last record (default 5s).
          --creds FILE            Authenticate with the user JWT and NKey seed in FILE.
          --tlscert FILE          The client certificate for TLS (with --tlskey).
          --tlskey FILE           The client certificate's private key.
          --tlsca FILE            The certificate authority to check the server's certificate against.
          -h, --help              Show this help.

        EXIT STATUS:
          0   every record was acknowledged (with --create-stream: the stream is there, as asked)
          64  a usage error, or records given to --create-stream; nothing was sent
          65  the server refused a record for good (larger than it takes, or an id no header can hold)
          75  try again later: the server was unreachable, an acknowledgement timed out, or, with
              no --stream, no stream captures the subject
          78  a configuration error; nothing more is sent and the batch is kept: an invalid stream
              name, a --stream that does not exist (deleted, or never made) or was deleted while
              forwarding, a stream whose subjects or duplicate window differ from the options, a
              subject another stream captures, or a --creds, --tlscert, --tlskey or --tlsca file
              that cannot be used. The message says which option to change.

        EXAMPLES:
          forward-nats --server nats://10.0.0.5:4222 --subject shared.items --create-stream SHARED --dupe-window 10m </dev/null
          host-drain --long-running --exec 'forward-nats --server nats://10.0.0.5:4222 --subject shared.items --stream SHARED --dupe-window 10m'

        """
}
