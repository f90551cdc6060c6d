/// A record's id, read from its JSON line, as the value of the `Nats-Msg-Id` header.
enum RecordID {
    /// The id of the record `line` holds, checked to be a header value that stands for it alone.
    /// - Throws: ``ForwardingFailure`` of kind `.refused` for a line that is not a record, or an
    ///   id that a header cannot carry unchanged.
    static func of(_ line: UnsafeBufferPointer<UInt8>) throws(ForwardingFailure) -> String {
        guard let bytes = JSONMemberScanner.stringMember("id", in: line), let id = String(validating: bytes, as: UTF8.self) else {
            let start = String(decoding: line.prefix(80), as: UTF8.self)
            throw ForwardingFailure(.refused, "not a record with a string id: \(start)")
        }
        guard canBeHeaderValue(id) else {
            throw ForwardingFailure(.refused, "the record id \(quoted(id)) cannot be a Nats-Msg-Id header: it has a control character, or a space at an end")
        }
        return id
    }

    /// Header values end at a line break and lose the spaces at their ends, so such an id would be
    /// cut or would collide with another; NUL would end it as a C string.
    static func canBeHeaderValue(_ id: String) -> Bool {
        let bytes = id.utf8
        let isControl = { (byte: UInt8) in byte < 0x20 || byte == 0x7F }
        return !bytes.isEmpty && !bytes.contains(where: isControl) && bytes.first != 0x20 && bytes.last != 0x20
    }

    /// `id` in double quotes, with control characters shown as escapes.
    static func quoted(_ id: String) -> String {
        var out = "\""
        for scalar in id.unicodeScalars {
            out += scalar.value < 0x20 || scalar.value == 0x7F || scalar == "\"" || scalar == "\\"
                ? scalar.escaped(asASCII: false) : String(scalar)
        }
        return out + "\""
    }
}
