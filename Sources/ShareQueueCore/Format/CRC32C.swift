import CChecksum

/// CRC-32C (Castagnoli), the checksum LevelDB, ext4 and iSCSI use to detect
/// damaged records. Computed by the processor's crc32 instruction where it has
/// one (SSE 4.2, see CChecksum), and by slice-by-16 tables elsewhere, which keep
/// a drain limited by I/O rather than by checksumming.
enum CRC32C {
    private static let polynomial: UInt32 = 0x82F6_3B78
    private static let sliceCount = 16

    /// Sixteen tables of 256 entries, one after another: table k at k * 256 gives
    /// the CRC of a byte followed by k zero bytes. Allocated once and never freed, so
    /// that a checksum reads them through a plain pointer, with no array to retain.
    /// Filled in by the lazy initializer, which runs once, before any reader; only read after.
    nonisolated(unsafe) private static let tables: UnsafePointer<UInt32> = {
        let tables = UnsafeMutablePointer<UInt32>.allocate(capacity: sliceCount * 256)
        for n in 0..<256 {
            var crc = UInt32(n)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ polynomial : crc >> 1 }
            tables[n] = crc
        }
        for k in 1..<sliceCount {
            for n in 0..<256 {
                let previous = tables[(k - 1) * 256 + n]
                tables[k * 256 + n] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
            }
        }
        return UnsafePointer(tables)
    }()

    /// Whether this processor computes the checksum itself, asked once.
    static let hasInstruction = sharequeue_crc32c_instruction() == 1

    /// The checksum of `bytes`, continuing from `crc` (the checksum of what came before).
    static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard hasInstruction, let base = bytes.baseAddress else { return checksumByTables(bytes, continuing: crc) }
        return ~sharequeue_crc32c_update(~crc, base, bytes.count)
    }

    /// The checksum by the tables alone: what a processor without the instruction
    /// runs, and what tests compare the instruction with.
    static func checksumByTables(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        var crc = ~crc
        guard let base = bytes.baseAddress else { return ~crc }
        let count = bytes.count
        var index = 0
        // Pointer arithmetic: the indexes are masked to 0...255, so no bounds checks are needed.
        let t = tables
        // Sixteen bytes a step: sixteen independent lookups, which a CPU overlaps.
        while count - index >= 16 {
            let first = base.loadUnaligned(fromByteOffset: index, as: UInt64.self).littleEndian
            let second = base.loadUnaligned(fromByteOffset: index + 8, as: UInt64.self).littleEndian
            let a = crc ^ UInt32(truncatingIfNeeded: first)
            let b = UInt32(truncatingIfNeeded: first >> 32)
            let c = UInt32(truncatingIfNeeded: second)
            let d = UInt32(truncatingIfNeeded: second >> 32)
            crc = t[15 * 256 + Int(a & 0xFF)] ^ t[14 * 256 + Int((a >> 8) & 0xFF)]
                ^ t[13 * 256 + Int((a >> 16) & 0xFF)] ^ t[12 * 256 + Int(a >> 24)]
                ^ t[11 * 256 + Int(b & 0xFF)] ^ t[10 * 256 + Int((b >> 8) & 0xFF)]
                ^ t[9 * 256 + Int((b >> 16) & 0xFF)] ^ t[8 * 256 + Int(b >> 24)]
                ^ t[7 * 256 + Int(c & 0xFF)] ^ t[6 * 256 + Int((c >> 8) & 0xFF)]
                ^ t[5 * 256 + Int((c >> 16) & 0xFF)] ^ t[4 * 256 + Int(c >> 24)]
                ^ t[3 * 256 + Int(d & 0xFF)] ^ t[2 * 256 + Int((d >> 8) & 0xFF)]
                ^ t[1 * 256 + Int((d >> 16) & 0xFF)] ^ t[Int(d >> 24)]
            index += 16
        }
        // What is left, at most 15 bytes: four at a time, then one.
        while count - index >= 4 {
            let a = crc ^ base.loadUnaligned(fromByteOffset: index, as: UInt32.self).littleEndian
            crc = t[3 * 256 + Int(a & 0xFF)] ^ t[2 * 256 + Int((a >> 8) & 0xFF)]
                ^ t[1 * 256 + Int((a >> 16) & 0xFF)] ^ t[Int(a >> 24)]
            index += 4
        }
        while index < count {
            crc = (crc >> 8) ^ t[Int((crc ^ UInt32(base.load(fromByteOffset: index, as: UInt8.self))) & 0xFF)]
            index += 1
        }
        return ~crc
    }

    /// The checksum of a 32-bit field stored little-endian, such as a frame's length.
    static func checksum(littleEndian value: UInt32, continuing crc: UInt32 = 0) -> UInt32 {
        guard hasInstruction else { return checksumByTables(littleEndian: value, continuing: crc) }
        return withUnsafeBytes(of: value.littleEndian) { ~sharequeue_crc32c_update(~crc, $0.baseAddress, 4) }
    }

    /// The checksum of a little-endian field by the tables alone.
    static func checksumByTables(littleEndian value: UInt32, continuing crc: UInt32 = 0) -> UInt32 {
        // One step of four lookups, as `checksum` takes four bytes; the value's low byte comes first.
        let a = ~crc ^ value
        let t = tables
        return ~(t[3 * 256 + Int(a & 0xFF)] ^ t[2 * 256 + Int((a >> 8) & 0xFF)] ^ t[1 * 256 + Int((a >> 16) & 0xFF)] ^ t[Int(a >> 24)])
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }
}
