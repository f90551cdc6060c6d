/// CRC-32C (Castagnoli), the checksum LevelDB, ext4 and iSCSI use to detect
/// damaged records. Slice-by-8 tables keep it fast enough that a drain is
/// limited by I/O rather than by checksumming.
enum CRC32C {
    private static let polynomial: UInt32 = 0x82F6_3B78

    /// Eight tables of 256 entries, one after another: table k at k * 256.
    private static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for n in 0..<256 {
            var crc = UInt32(n)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ polynomial : crc >> 1 }
            tables[n] = crc
        }
        for k in 1..<8 {
            for n in 0..<256 {
                let previous = tables[(k - 1) * 256 + n]
                tables[k * 256 + n] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
            }
        }
        return tables
    }()

    /// The checksum of `bytes`, continuing from `crc` (the checksum of what came before).
    static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        var crc = ~crc
        guard let base = bytes.baseAddress else { return ~crc }
        let count = bytes.count
        var index = 0
        tables.withUnsafeBufferPointer { table in
            // Pointer arithmetic: the indexes are masked to 0...255, so no bounds checks are needed.
            let t = table.baseAddress!
            while count - index >= 8 {
                let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self).littleEndian
                let low = crc ^ UInt32(truncatingIfNeeded: word)
                let high = UInt32(truncatingIfNeeded: word >> 32)
                crc = t[7 * 256 + Int(low & 0xFF)] ^ t[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((low >> 16) & 0xFF)] ^ t[4 * 256 + Int(low >> 24)]
                    ^ t[3 * 256 + Int(high & 0xFF)] ^ t[2 * 256 + Int((high >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((high >> 16) & 0xFF)] ^ t[Int(high >> 24)]
                index += 8
            }
            while index < count {
                crc = (crc >> 8) ^ t[Int((crc ^ UInt32(base.load(fromByteOffset: index, as: UInt8.self))) & 0xFF)]
                index += 1
            }
        }
        return ~crc
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }
}
