import Testing
@testable import ShareQueueCore

/// CRC-32C, by the processor's instruction and by the tables, against the definition, one bit at a time.
@Suite("CRC-32C")
struct CRC32CTests {
    /// CRC-32C as defined: reflected, polynomial 0x82F63B78, all ones in and out.
    func bitwise(_ bytes: some Sequence<UInt8>, continuing crc: UInt32 = 0) -> UInt32 {
        var crc = ~crc
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return ~crc
    }

    /// Reproducible bytes, so that a failure can be replayed.
    func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var random = SeededGenerator(state: seed)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }

    @Test("The standard check value and the iSCSI test vectors (RFC 3720, B.4)")
    func knownValues() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum((0..<32).map { UInt8($0) }) == 0x46DD_794E)
        #expect(CRC32C.checksum((0..<32).map { UInt8(31 - $0) }) == 0x113F_DB5C)
        #expect(CRC32C.checksum([]) == 0)
    }

    @Test("Every length from 0 to 300, at every alignment, equals the bitwise definition")
    func everyLength() {
        let bytes = randomBytes(320, seed: 1)
        var mismatches: [String] = []
        bytes.withUnsafeBytes { all in
            for offset in 0..<16 {
                for length in 0...300 {
                    let slice = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + length)])
                    let expected = bitwise(slice)
                    if CRC32C.checksum(slice) != expected { mismatches.append("\(length) bytes at \(offset)") }
                    if CRC32C.checksumByTables(slice) != expected { mismatches.append("\(length) bytes at \(offset), by the tables") }
                }
            }
        }
        #expect(mismatches == [])
    }

    @Test("Random buffers, whole and continued from any split, equal the bitwise definition")
    func randomBuffers() {
        for seed in UInt64(2)..<42 {
            let bytes = randomBytes(Int(seed * 97 % 4099), seed: seed)
            let expected = bitwise(bytes)
            #expect(CRC32C.checksum(bytes) == expected)
            let split = Int(seed * 31) % (bytes.count + 1)
            let continued = bytes.withUnsafeBytes {
                CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[split...]),
                                continuing: CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[..<split])))
            }
            #expect(continued == expected)
            let continuedByTables = bytes.withUnsafeBytes {
                CRC32C.checksumByTables(UnsafeRawBufferPointer(rebasing: $0[split...]),
                                        continuing: CRC32C.checksumByTables(UnsafeRawBufferPointer(rebasing: $0[..<split])))
            }
            #expect(continuedByTables == expected)
        }
    }

    #if arch(x86_64)
    /// Every x86-64 processor since 2008 has SSE 4.2: one that reports none here means the detection broke.
    @Test("An x86-64 processor computes the checksum with its instruction")
    func instructionFound() {
        #expect(CRC32C.hasInstruction)
    }
    #endif

    @Test("A little-endian field's checksum is that of its four bytes")
    func field() {
        for value: UInt32 in [0, 1, 0x1234_5678, 0xFFFF_FFFF] {
            let bytes = [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: value >> $0) }
            #expect(CRC32C.checksum(littleEndian: value) == bitwise(bytes))
            #expect(CRC32C.checksum(littleEndian: value, continuing: 0xDEAD_BEEF) == bitwise(bytes, continuing: 0xDEAD_BEEF))
            #expect(CRC32C.checksumByTables(littleEndian: value, continuing: 0xDEAD_BEEF) == bitwise(bytes, continuing: 0xDEAD_BEEF))
        }
    }
}
