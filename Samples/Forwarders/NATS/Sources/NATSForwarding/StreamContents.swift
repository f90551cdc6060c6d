import CNATS

/// What a stream holds, read message by message: the witness the forwarding tests
/// count against, independent of the forwarder's own view.
public struct StreamContents {
    let connection: JetStreamConnection
    let stream: String

    /// The contents of `stream` on `connection`'s server.
    public init(_ connection: JetStreamConnection, stream: String) {
        self.connection = connection
        self.stream = stream
    }

    /// How many messages the stream holds.
    /// - Throws: ``ForwardingFailure`` when the server cannot tell.
    public func count() throws(ForwardingFailure) -> UInt64 {
        try withInfo { $0.State.Msgs }
    }

    /// Calls `body` with each message's `Nats-Msg-Id` header (empty when it has none) and data, in stream order.
    /// - Throws: ``ForwardingFailure`` when a message cannot be read.
    public func forEach(_ body: (String, UnsafeRawBufferPointer) -> Void) throws(ForwardingFailure) {
        let (first, last) = try withInfo { ($0.State.FirstSeq, $0.State.LastSeq) }
        guard first > 0 else { return }
        for sequence in first...last {
            var message: OpaquePointer? = nil
            var code = jsErrCode(0)
            let status = js_GetMsg(&message, connection.context, stream, sequence, nil, &code)
            defer { natsMsg_Destroy(message) }
            // A message deleted from the middle leaves its sequence number unused.
            if code == JSNoMessageFoundErr { continue }
            try check(status, "cannot read message \(sequence) of the stream \(stream)")
            var id: UnsafePointer<CChar>? = nil
            let header = natsMsgHeader_Get(message, "Nats-Msg-Id", &id) == NATS_OK ? String(cString: id!) : ""
            body(header, UnsafeRawBufferPointer(start: natsMsg_GetData(message), count: Int(natsMsg_GetDataLength(message))))
        }
    }

    private func withInfo<T>(_ read: (jsStreamInfo) -> T) throws(ForwardingFailure) -> T {
        var info: UnsafeMutablePointer<jsStreamInfo>? = nil
        defer { jsStreamInfo_Destroy(info) }
        try check(js_GetStreamInfo(&info, connection.context, stream, nil, nil), "cannot look up the stream \(stream)")
        return read(info!.pointee)
    }
}
