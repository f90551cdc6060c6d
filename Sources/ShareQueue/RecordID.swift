/// Record ids: random (version 4) UUID strings, made without Foundation so
/// that an append's start-up stays small.
enum RecordID {
    static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = Array("0123456789ABCDEF".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (i, byte) in bytes.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { text.append(UInt8(ascii: "-")) }
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether `text` is a UUID string, `8-4-4-4-12` hexadecimal digits in either case.
    static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (i, byte) in bytes.enumerated() {
            if i == 8 || i == 13 || i == 18 || i == 23 {
                if byte != UInt8(ascii: "-") { return false }
            } else if !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                        && !(UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20) {
                return false
            }
        }
        return true
    }
}
