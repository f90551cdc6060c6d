/// Random bytes from the kernel, fetched 4 KiB at a time: one system call
/// per 256 ids instead of one per few bytes. Not shared between threads.
import ShareQueueSystem
struct RandomPool {
    private var bytes: [UInt8] = []
    private var next = 0

    mutating func take(_ count: Int) -> ArraySlice<UInt8> {
        if next + count > bytes.count {
            bytes = Host.randomBytes(4096)
            next = 0
        }
        defer { next += count }
        return bytes[next..<(next + count)]
    }
}

/// Record ids: random (version 4) UUID strings, made without Foundation so
/// that an append's start-up stays small.
enum RecordID {
    static func random() -> String {
        var pool = RandomPool()
        return random(using: &pool)
    }

    static func random(using pool: inout RandomPool) -> String {
        var bytes = Array(pool.take(16))
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
