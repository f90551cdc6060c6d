/// A record's id, read from its JSON line, as the value of the `Nats-Msg-Id` header.
enum RecordID {
    /// Puts the id of the record `line` holds in `id`, ended by a NUL for the C client, checked
    /// to be a header value that stands for it alone. `id` is the caller's, kept from record to
    /// record, so that an id costs no allocation.
    /// - Throws: ``ForwardingFailure`` of kind `.refused` for a line that is not a record, or an
    ///   id that a header cannot carry unchanged.
    static func read(_ line: UnsafeBufferPointer<UInt8>, into id: inout [UInt8]) throws(ForwardingFailure) {
        guard JSONMemberScanner.stringMember("id", in: line, into: &id), isUTF8(id) else {
            let start = String(decoding: line.prefix(80), as: UTF8.self)
            throw ForwardingFailure(.refused, "not a record with a string id: \(start)")
        }
        guard canBeHeaderValue(id) else {
            throw ForwardingFailure(.refused, "the record id \(quoted(String(decoding: id, as: UTF8.self))) cannot be a Nats-Msg-Id header: it has a control character, or a space at an end")
        }
        id.append(0)
    }

    /// Whether `bytes` are UTF-8: at once for ASCII, as ids usually are.
    private static func isUTF8(_ bytes: [UInt8]) -> Bool {
        bytes.allSatisfy { $0 < 0x80 } || String(validating: bytes, as: UTF8.self) != nil
    }

    /// Header values end at a line break and lose the spaces at their ends, so such an id would be
    /// cut or would collide with another; NUL would end it as a C string.
    static func canBeHeaderValue(_ id: [UInt8]) -> Bool {
        !id.isEmpty && !id.contains(where: { $0 < 0x20 || $0 == 0x7F }) && id.first != 0x20 && id.last != 0x20
    }

    /// The id in `id`, as ``read(_:into:)`` left it, for a message.
    static func text(_ id: [UInt8]) -> String {
        String(decoding: id.last == 0 ? id.dropLast() : id[...], as: UTF8.self)
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
