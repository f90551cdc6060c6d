import NATSForwarding

// nats-stream-dump: what a JetStream stream holds, one message a line as
// "<Nats-Msg-Id> TAB <data>", or with --count only the number of messages; with
// --delete it deletes the stream instead (the tests' way to lose one).
// The forwarding tests' witness: it reads the stream, not the forwarder's answers.
let usage = "nats-stream-dump --stream NAME [--server URL] [--count | --delete]"
var options = ForwarderOptions()
var stream: String? = nil
var countOnly = false
var delete = false
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--server": options.server = arguments.popFirst() ?? ""
    case "--stream": stream = arguments.popFirst()
    case "--count": countOnly = true
    case "--delete": delete = true
    case "-h", "--help":
        printOutput("OVERVIEW: Print what a JetStream stream holds, one message a line.\n\nUSAGE: \(usage)\n")
        exitProcess(0)
    default:
        printError("nats-stream-dump: error: unknown argument '\(argument)'\nUsage: \(usage)\n")
        exitProcess(64)
    }
}
guard let stream, !options.server.isEmpty else {
    printError("nats-stream-dump: error: missing --stream or --server's value\nUsage: \(usage)\n")
    exitProcess(64)
}
do {
    let connection = try JetStreamConnection(options)
    let contents = StreamContents(connection, stream: stream)
    if delete {
        try connection.deleteStream(stream)
    } else if countOnly {
        printOutput("\(try contents.count())\n")
    } else {
        var out: [UInt8] = []
        try contents.forEach { id, data in
            out += id.utf8
            out.append(0x09)
            out += data
            out.append(0x0A)
        }
        printOutput(String(decoding: out, as: UTF8.self))
    }
    exitProcess(0)
} catch {
    printError("nats-stream-dump: error: \(error.message)\n")
    exitProcess(error.exitStatus)
}
