import CNATS

/// A connection to a NATS server and its JetStream context, set up from the command
/// line's options. It never reconnects: a forwarder whose connection dropped ends (75),
/// and the batch is host-drain's to send again, to a new forwarder.
public final class JetStreamConnection {
    let connection: OpaquePointer
    let context: OpaquePointer
    let options: ForwarderOptions

    /// Connects to `options.server` with its timeout, credentials and TLS.
    /// - Parameters:
    ///   - acknowledgements: where asynchronous publishes report their acknowledgements, if any are made.
    /// - Throws: ``ForwardingFailure``: `.tryAgain` when the server cannot be reached, `.configuration`
    ///   when the URL or a file cannot be used.
    public init(_ options: ForwarderOptions, acknowledgements: AcknowledgementTally? = nil) throws(ForwardingFailure) {
        self.options = options
        var settings: OpaquePointer? = nil
        try check(natsOptions_Create(&settings), "cannot set up the NATS client")
        defer { natsOptions_Destroy(settings) }
        try check(natsOptions_SetURL(settings, options.server), "'\(options.server)' is not a server URL (--server)", kind: .configuration)
        try check(natsOptions_SetName(settings, "forward-nats"), "cannot name the connection")
        try check(natsOptions_SetTimeout(settings, Self.milliseconds(options.timeout)), "cannot set the timeout")
        try check(natsOptions_SetAllowReconnect(settings, false), "cannot turn reconnecting off")
        if let credentials = options.credentials {
            try check(natsOptions_SetUserCredentialsFromFiles(settings, credentials, nil), "cannot use the file of --creds (\(credentials))", kind: .configuration)
        }
        if options.usesTLS {
            try check(natsOptions_SetSecure(settings, true), "cannot turn TLS on")
            if let authority = options.tlsAuthority {
                try check(natsOptions_LoadCATrustedCertificates(settings, authority), "cannot use the file of --tlsca (\(authority))", kind: .configuration)
            }
            if let certificate = options.tlsCertificate, let key = options.tlsKey {
                try check(natsOptions_LoadCertificatesChain(settings, certificate, key), "cannot use the files of --tlscert and --tlskey (\(certificate), \(key))", kind: .configuration)
            }
        }
        var connected: OpaquePointer? = nil
        try check(natsConnection_Connect(&connected, settings), "cannot connect to \(options.server)")
        connection = connected!

        var contextOptions = jsOptions()
        jsOptions_Init(&contextOptions)
        contextOptions.Wait = Self.milliseconds(options.timeout)
        // A bounded window of records in flight: past it, a publish waits for acknowledgements
        // (up to the timeout) instead of holding a whole large batch in memory twice.
        contextOptions.PublishAsync.MaxPending = 8192
        contextOptions.PublishAsync.StallWait = Self.milliseconds(options.timeout)
        if let acknowledgements {
            contextOptions.PublishAsync.AckHandler = acknowledgeRecord
            contextOptions.PublishAsync.AckHandlerClosure = Unmanaged.passUnretained(acknowledgements).toOpaque()
        }
        var made: OpaquePointer? = nil
        let status = natsConnection_JetStream(&made, connection, &contextOptions)
        guard status == NATS_OK, let made else {
            natsConnection_Destroy(connection)
            throw ForwardingFailure(.tryAgain, "cannot use JetStream on \(options.server): \(explanation(of: status))")
        }
        context = made
    }

    deinit {
        jsCtx_Destroy(context)
        natsConnection_Destroy(connection)
    }

    static func milliseconds(_ seconds: Double) -> Int64 { Int64((seconds * 1000).rounded(.up)) }
}
