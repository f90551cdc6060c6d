import NATSForwarding

// forward-nats: host-drain --exec's command for NATS JetStream, a batch a process, or every
// batch of a drain with --long-running (see Forwarder). The exit status tells host-drain what
// became of the batch: 0 stored, 65 a record refused for good, 75 later,
// 78 the options do not fit the server: nothing a retry mends, an operator must look.
do {
    switch try ForwarderOptions.parse(Array(CommandLine.arguments.dropFirst())) {
    case .help:
        printOutput(ForwarderOptions.help)
    case .forward(let options):
        try Forwarder.forwardStandardInput(options)
    }
    exitProcess(0)
} catch {
    printError("forward-nats: error: \(error.message)\n")
    if error.kind == .usage { printError("Usage: \(ForwarderOptions.usage)\n  See 'forward-nats --help'.\n") }
    exitProcess(error.exitStatus)
}
