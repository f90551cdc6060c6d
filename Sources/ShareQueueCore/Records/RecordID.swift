/// Random bytes from the kernel, fetched 4 KiB at a time: one system call
/// per 400 ids instead of one per few bytes. Not shared between threads.
import ShareQueueSystem
struct RandomPool {
    private var bytes: [UInt8] = []
    private var next = 0

    /// The next `count` bytes, at most 8, as an integer whose first byte is the most significant.
    mutating func take(_ count: Int) -> UInt64 {
        if next + count > bytes.count {
            bytes = Host.randomBytes(4096)
            next = 0
        }
        defer { next += count }
        return bytes.withUnsafeBytes { pool in
            (0..<count).reduce(0) { $0 << 8 | UInt64(pool[next + $1]) }
        }
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
            let seed = UInt16(truncatingIfNeeded: pool.take(2))
            let random = pool.take(8)
            if now > last.milliseconds {
                last = (now, seed >> 5 & 0x7F8 | seed & 0x7)
            } else if last.counter < 0xFFF {
                last.counter += 1
            } else {
                last = (last.milliseconds + 1, seed >> 5 & 0x7F8)
            }
            let time = UInt64(truncatingIfNeeded: last.milliseconds) & 0xFFFF_FFFF_FFFF
            let bytes = (time << 16 | 0x7000 | UInt64(last.counter), random & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000)
            return RecordID.text(of: bytes)
        }
    }

    /// `8-4-4-4-12` upper-case hexadecimal digits of 16 bytes, given as two
    /// big-endian halves: written straight into the string, eight digits at a time.
    static func text(of bytes: (UInt64, UInt64)) -> String {
        String(unsafeUninitializedCapacity: 36) { buffer in
            let text = UnsafeMutableRawBufferPointer(buffer)
            let dash = UInt8(ascii: "-")
            let digits = (hexDigits(of: bytes.0 >> 32), hexDigits(of: bytes.0), hexDigits(of: bytes.1 >> 32), hexDigits(of: bytes.1))
            // Each group of 8 digits is stored whole or as two halves of 4, around the dashes.
            text.storeBytes(of: digits.0.littleEndian, toByteOffset: 0, as: UInt64.self)
            text[8] = dash
            text.storeBytes(of: UInt32(truncatingIfNeeded: digits.1).littleEndian, toByteOffset: 9, as: UInt32.self)
            text[13] = dash
            text.storeBytes(of: UInt32(truncatingIfNeeded: digits.1 >> 32).littleEndian, toByteOffset: 14, as: UInt32.self)
            text[18] = dash
            text.storeBytes(of: UInt32(truncatingIfNeeded: digits.2).littleEndian, toByteOffset: 19, as: UInt32.self)
            text[23] = dash
            text.storeBytes(of: UInt32(truncatingIfNeeded: digits.2 >> 32).littleEndian, toByteOffset: 24, as: UInt32.self)
            text.storeBytes(of: digits.3.littleEndian, toByteOffset: 28, as: UInt64.self)
            return 36
        }
    }

    /// The 8 upper-case hexadecimal digits of the low 32 bits of `value`, most
    /// significant first, as the bytes of a word from its least significant byte up.
    private static func hexDigits(of value: UInt64) -> UInt64 {
        // Spread the nibbles one to a byte, the lowest nibble in the lowest byte.
        var nibbles = value & 0xFFFF_FFFF
        nibbles = (nibbles | nibbles << 16) & 0x0000_FFFF_0000_FFFF
        nibbles = (nibbles | nibbles << 8) & 0x00FF_00FF_00FF_00FF
        nibbles = (nibbles | nibbles << 4) & 0x0F0F_0F0F_0F0F_0F0F
        // A nibble of 10 or more gets 7 more, from '0' + 10 to 'A'; no byte carries into the next.
        let letters = (nibbles &+ 0x0606_0606_0606_0606) >> 4 & 0x0101_0101_0101_0101
        let ascii = nibbles &+ 0x3030_3030_3030_3030 &+ letters &* 7
        return ascii.byteSwapped
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
