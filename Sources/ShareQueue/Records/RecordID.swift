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

/// Record ids: time-ordered (version 7, RFC 9562) UUID strings, made without
/// Foundation so that an append's start-up stays small. Ordered by time, a
/// store's index of ids grows at its end instead of at random pages.
enum RecordID {
    /// A new id from a generator of its own: ordered by time against other
    /// processes' ids, but not within the millisecond.
    static func random() -> String {
        var generator = Generator()
        return generator.next()
    }

    /// Makes version-7 ids that increase strictly, one after another, even
    /// while the clock stands still or steps back (RFC 9562, section 6.2,
    /// method 1: a 12-bit counter in `rand_a`, started at a random value below
    /// half its range; when it runs out, the timestamp moves on by one).
    /// Not shared between threads.
    struct Generator {
        private var pool = RandomPool()
        private var last: (milliseconds: Int64, counter: UInt16) = (-1, 0)

        mutating func next() -> String {
            next(milliseconds: Host.millisecondsSince1970())
        }

        mutating func next(milliseconds now: Int64) -> String {
            let random = pool.take(10)
            if now > last.milliseconds {
                last = (now, UInt16(random[random.startIndex]) << 3 & 0x7F8 | UInt16(random[random.startIndex + 1] & 0x7))
            } else if last.counter < 0xFFF {
                last.counter += 1
            } else {
                last = (last.milliseconds + 1, UInt16(random[random.startIndex]) << 3 & 0x7F8)
            }
            let time = UInt64(truncatingIfNeeded: last.milliseconds) & 0xFFFF_FFFF_FFFF
            var bytes: (UInt64, UInt64) = (time << 16 | 0x7000 | UInt64(last.counter), 0)
            for i in 0..<8 { bytes.1 = bytes.1 << 8 | UInt64(random[random.startIndex + 2 + i]) }
            bytes.1 = bytes.1 & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000
            return RecordID.text(of: bytes)
        }
    }

    /// `8-4-4-4-12` upper-case hexadecimal digits of 16 bytes, given as two
    /// big-endian halves: written straight into the string, with no array between.
    static func text(of bytes: (UInt64, UInt64)) -> String {
        String(unsafeUninitializedCapacity: 36) { text in
            let digits: StaticString = "0123456789ABCDEF"
            var at = 0
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 { text[at] = UInt8(ascii: "-"); at += 1 }
                let word = index < 8 ? bytes.0 : bytes.1
                let byte = Int(truncatingIfNeeded: word >> (56 - 8 * (index % 8))) & 0xFF
                text[at] = digits.utf8Start[byte >> 4]
                text[at + 1] = digits.utf8Start[byte & 0xF]
                at += 2
            }
            return at
        }
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
