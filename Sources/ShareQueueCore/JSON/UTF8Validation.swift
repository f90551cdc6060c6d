/// Strict UTF-8 validation over bytes, without making a String: no overlong
/// forms, no surrogates, nothing above U+10FFFF. ASCII, most of what a queue
/// holds, is checked sixteen bytes at a time.
enum UTF8Validation {
    static func isValid(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { isValid($0) }
    }

    static func isValid(_ buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = buffer.count
        var i = 0
        while i < count {
            // Two words at once while both are ASCII: most records are ASCII throughout.
            while i + 16 <= count {
                let words = UnsafeRawPointer(buffer.baseAddress! + i).loadUnaligned(as: UInt64.self)
                    | UnsafeRawPointer(buffer.baseAddress! + i + 8).loadUnaligned(as: UInt64.self)
                if words & 0x8080_8080_8080_8080 != 0 { break }
                i += 16
            }
            if i == count { break }
            if i + 8 <= count {
                let word = UnsafeRawPointer(buffer.baseAddress! + i).loadUnaligned(as: UInt64.self)
                if word & 0x8080_8080_8080_8080 == 0 { i += 8; continue }
            }
            if buffer[i] < 0x80 { i += 1; continue }
            guard let length = sequenceLength(buffer, at: i) else { return false }
            i += length
        }
        return true
    }

    /// The length of the well-formed multi-byte sequence at `i` (whose lead
    /// byte is not ASCII), or nil when it is not one.
    @inline(__always)
    static func sequenceLength(_ buffer: UnsafeBufferPointer<UInt8>, at i: Int) -> Int? {
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch buffer[i] {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upper = 0x9F
        case 0xF0: length = 4; lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upper = 0x8F
        default: return nil
        }
        guard i + length <= buffer.count else { return nil }
        let second = buffer[i + 1]
        guard second >= lower && second <= upper else { return nil }
        for k in 2..<length where buffer[i + k] & 0xC0 != 0x80 { return nil }
        return length
    }
}
