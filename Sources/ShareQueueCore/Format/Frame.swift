/// How one record is laid out in a segment file.
///
///     offset  size  field
///     0       4     header magic  FF 53 51 52  ("\xFFSQR")
///     4       4     payload length L, unsigned little-endian
///     8       4     CRC-32C of the length field and the payload, little-endian
///     12      L     payload: the record as one compact UTF-8 JSON object
///     12+L    4     payload length L again
///     16+L    4     trailer magic: FF 45 4E 44 ("\xFFEND") on the last frame
///                   of an append, FF 4D 4F 52 ("\xFFMOR") on the others
///
/// 0xFF never occurs in UTF-8, so no magic can appear inside a payload: a
/// reader that meets damage finds the next record by searching for the header
/// magic. The trailer lets a writer check in two small reads that the file
/// ends on a whole append, and marks which frames belong to one append so that
/// a reader delivers all of a batch or none of it.
package enum Frame {
    static let headerMagic: [UInt8] = [0xFF, 0x53, 0x51, 0x52]
    static let trailerMagic: [UInt8] = [0xFF, 0x45, 0x4E, 0x44]
    static let continuedTrailerMagic: [UInt8] = [0xFF, 0x4D, 0x4F, 0x52]
    static let headerSize = 12
    static let trailerSize = 8
    package static let overhead = headerSize + trailerSize
    /// No reader allocates a payload above this, whatever a header declares.
    static let maximumPayloadSize = 16 << 20
    /// The most bytes of frames one append of several records may write.
    package static let maximumBatchSize = 16 << 20

    /// Appends the frame of `payload` to `buffer`; `last` is false for all
    /// but the last record of an append.
    static func append(payload: [UInt8], to buffer: inout [UInt8], last: Bool = true) {
        payload.withUnsafeBytes { append(payload: $0, to: &buffer, last: last) }
    }

    /// Appends the frame of `payload` to `buffer`: header, payload and trailer in
    /// three copies, as an append runs it for every record.
    static func append(payload: UnsafeRawBufferPointer, to buffer: inout [UInt8], last: Bool = true) {
        let length = UInt32(payload.count)
        let crc = CRC32C.checksum(payload, continuing: CRC32C.checksum(littleEndian: length))
        appendWords(headerMagicWord, length, crc, to: &buffer)
        buffer.append(contentsOf: payload)
        appendWords(length, last ? trailerMagicWord : continuedTrailerMagicWord, to: &buffer)
    }

    /// Appends a frame whose payload `writePayload` appends to the buffer in
    /// place, so that a record is encoded once, straight into its frame.
    /// - Returns: the payload's length.
    static func append(to buffer: inout [UInt8], last: Bool, writePayload: (inout [UInt8]) -> Void) -> Int {
        let start = buffer.count
        appendWords(headerMagicWord, 0, 0, to: &buffer)  // length and checksum, filled in below
        writePayload(&buffer)
        let length = UInt32(buffer.count - start - headerSize)
        buffer.withUnsafeMutableBytes { frame in
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: frame[(start + headerSize)...]), continuing: CRC32C.checksum(littleEndian: length))
            frame.storeBytes(of: length.littleEndian, toByteOffset: start + 4, as: UInt32.self)
            frame.storeBytes(of: crc.littleEndian, toByteOffset: start + 8, as: UInt32.self)
        }
        appendWords(length, last ? trailerMagicWord : continuedTrailerMagicWord, to: &buffer)
        return Int(length)
    }

    /// What the bytes at the start of a frame say about it.
    enum Inspection: Equatable {
        /// A whole, undamaged frame of `size` bytes; `continued` if more frames of its append follow.
        case complete(size: Int, continued: Bool)
        /// Consistent so far, but more bytes are needed to judge it.
        case incomplete
        case damaged(reason: String)
    }

    /// Judges the frame that starts at `bytes[0]`; `bytes` holds whatever is available after it.
    static func inspect(_ bytes: UnsafeRawBufferPointer) -> Inspection {
        if bytes.count < headerSize {
            let magicBytes = min(bytes.count, 4)
            for i in 0..<magicBytes where bytes[i] != headerMagic[i] {
                return .damaged(reason: "no record header")
            }
            return .incomplete
        }
        // Whole words from here on: this runs for every record a drain reads.
        guard readLittleEndian(bytes, at: 0) == headerMagicWord else { return .damaged(reason: "no record header") }
        let length = Int(readLittleEndian(bytes, at: 4))
        if length > maximumPayloadSize {
            return .damaged(reason: "declared length \(length) is above the maximum of \(maximumPayloadSize)")
        }
        let size = overhead + length
        if bytes.count < size { return .incomplete }
        let trailer = headerSize + length
        let trailerWord = readLittleEndian(bytes, at: trailer + 4)
        let isLast = trailerWord == trailerMagicWord
        let isContinued = trailerWord == continuedTrailerMagicWord
        if Int(readLittleEndian(bytes, at: trailer)) != length || !(isLast || isContinued) {
            return .damaged(reason: "record trailer does not match its header")
        }
        // No UTF-8 text holds the byte FF, which every header magic begins with. Checked
        // before the CRC, so that headers planted inside one another's payloads are
        // refused at the first FF, and the CRCs computed cover any byte about once.
        if containsFF(UnsafeRawBufferPointer(rebasing: bytes[headerSize..<trailer])) {
            return .damaged(reason: payloadHoldsFFReason)
        }
        let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[headerSize..<trailer]), continuing: CRC32C.checksum(littleEndian: UInt32(length)))
        if crc != readLittleEndian(bytes, at: 8) { return .damaged(reason: "checksum mismatch") }
        return .complete(size: size, continued: isContinued)
    }

    /// The payload length that the last `trailerSize` bytes of a file declare,
    /// if they end a whole append (an "END" trailer). With `headerMatches`, cheap
    /// enough to run before every append: neither allocates nor verifies the checksum.
    static func trailerLength(_ trailer: UnsafeRawBufferPointer) -> Int? {
        guard trailer.count == trailerSize, readLittleEndian(trailer, at: 4) == trailerMagicWord else { return nil }
        let length = Int(readLittleEndian(trailer, at: 0))
        return length <= maximumPayloadSize ? length : nil
    }

    /// Whether `header` starts a frame whose payload is `length` bytes.
    static func headerMatches(_ header: UnsafeRawBufferPointer, length: Int) -> Bool {
        header.count >= 8 && readLittleEndian(header, at: 0) == headerMagicWord && Int(readLittleEndian(header, at: 4)) == length
    }

    /// The offset of the next header magic in `bytes` at or after `start`, if any.
    static func nextHeader(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        var i = start
        while i + 4 <= bytes.count {
            if bytes[i] == 0xFF && bytes[i + 1] == 0x53 && bytes[i + 2] == 0x51 && bytes[i + 3] == 0x52 { return i }
            i += 1
        }
        return nil
    }

    static let payloadHoldsFFReason = "the payload holds a byte FF, which no UTF-8 record has"

    /// Whether any byte is FF, eight bytes at a time: a word has an FF byte
    /// exactly when its complement has a zero byte.
    static func containsFF(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        while i + 8 <= bytes.count {
            let word = ~bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            if (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080 != 0 { return true }
            i += 8
        }
        while i < bytes.count {
            if bytes[i] == 0xFF { return true }
            i += 1
        }
        return false
    }

    /// The magics as the 32-bit words whose little-endian bytes they are.
    private static let headerMagicWord: UInt32 = 0x5251_53FF
    private static let trailerMagicWord: UInt32 = 0x444E_45FF
    private static let continuedTrailerMagicWord: UInt32 = 0x524F_4DFF

    /// Appends 32-bit fields little-endian, in one copy rather than byte by byte.
    private static func appendWords(_ first: UInt32, _ second: UInt32, to buffer: inout [UInt8]) {
        withUnsafeBytes(of: (first.littleEndian, second.littleEndian)) { buffer.append(contentsOf: $0) }
    }

    private static func appendWords(_ first: UInt32, _ second: UInt32, _ third: UInt32, to buffer: inout [UInt8]) {
        withUnsafeBytes(of: (first.littleEndian, second.littleEndian, third.littleEndian)) { buffer.append(contentsOf: $0) }
    }

    private static func readLittleEndian(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        // One bounds check and one load, rather than four of each.
        precondition(offset >= 0 && offset + 4 <= bytes.count)
        return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
}
