/// CRC-32C (Castagnoli), the checksum LevelDB, ext4 and iSCSI use to detect
/// damaged records. Slice-by-8 tables keep it fast enough that a drain is
/// limited by I/O rather than by checksumming.
enum CRC32C {
    private static let polynomial: UInt32 = 0x82F6_3B78

    private static let tables: [[UInt32]] = {
        var tables = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for n in 0..<256 {
            var crc = UInt32(n)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ polynomial : crc >> 1 }
            tables[0][n] = crc
        }
        for n in 0..<256 {
            for k in 1..<8 {
                let previous = tables[k - 1][n]
                tables[k][n] = (previous >> 8) ^ tables[0][Int(previous & 0xFF)]
            }
        }
        return tables
    }()

    /// The checksum of `bytes`, continuing from `crc` (the checksum of what came before).
    static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        var crc = ~crc
        var index = 0
        let count = bytes.count
        tables.withUnsafeBufferPointer { t in
            let t0 = t[0], t1 = t[1], t2 = t[2], t3 = t[3], t4 = t[4], t5 = t[5], t6 = t[6], t7 = t[7]
            while count - index >= 8 {
                let low = crc ^ (UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8
                    | UInt32(bytes[index + 2]) << 16 | UInt32(bytes[index + 3]) << 24)
                crc = t7[Int(low & 0xFF)] ^ t6[Int((low >> 8) & 0xFF)]
                    ^ t5[Int((low >> 16) & 0xFF)] ^ t4[Int(low >> 24)]
                    ^ t3[Int(bytes[index + 4])] ^ t2[Int(bytes[index + 5])]
                    ^ t1[Int(bytes[index + 6])] ^ t0[Int(bytes[index + 7])]
                index += 8
            }
            while index < count {
                crc = (crc >> 8) ^ t0[Int((crc ^ UInt32(bytes[index])) & 0xFF)]
                index += 1
            }
        }
        return ~crc
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }
}
