import Foundation

/// What a Linux executable's own headers say about how it was linked, read from
/// the file (64-bit little-endian ELF, as on every Linux the tools build for),
/// so that the tests need neither readelf nor nm, and nothing loads it.
struct ELFImage {
    /// `e_type` is `ET_DYN`: the kernel places it at a random address (ASLR).
    let isPositionIndependent: Bool
    /// The program loader it asks for (`PT_INTERP`): nil for a static executable.
    let interpreter: String?
    /// The shared libraries it needs loaded (`DT_NEEDED`).
    let neededLibraries: Int
    /// Whether it has a runpath (`DT_RUNPATH` or `DT_RPATH`), which glibc's static start-up refuses.
    let hasRunpath: Bool
    /// The names of the symbols it defines itself (`.symtab`, else `.dynsym`).
    let definedSymbols: [String]
    /// The names of the symbols it uses and another file defines: for an object file, the functions it calls elsewhere.
    let undefinedSymbols: [String]

    /// Reads the executable at `path`; nil if it is not a 64-bit little-endian ELF file.
    init?(path: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
        guard let image = data.withUnsafeBytes({ ELFImage(bytes: $0) }) else { return nil }
        self = image
    }

    private init?(bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 64, bytes[0..<4].elementsEqual([0x7F, 0x45, 0x4C, 0x46]), bytes[4] == 2, bytes[5] == 1 else { return nil }
        func integer(_ offset: Int, _ size: Int) -> Int {
            guard offset >= 0, offset + size <= bytes.count else { return 0 }
            switch size {
            case 2: return Int(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
            case 4: return Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            default: return Int(truncatingIfNeeded: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
            }
        }
        func string(_ offset: Int) -> String {
            guard offset >= 0, offset < bytes.count else { return "" }
            let tail = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            return String(decoding: tail.prefix { $0 != 0 }, as: UTF8.self)
        }
        isPositionIndependent = integer(16, 2) == 3
        var interpreter: String?
        var needed = 0
        var runpath = false
        let programHeaders = integer(32, 8), programHeaderSize = integer(54, 2)
        for index in 0..<integer(56, 2) {
            let header = programHeaders + index * programHeaderSize
            let type = integer(header, 4), offset = integer(header + 8, 8), size = integer(header + 32, 8)
            if type == 3 { interpreter = string(offset) }
            guard type == 2 else { continue }
            for entry in stride(from: offset, to: offset + size, by: 16) {
                let tag = integer(entry, 8)
                if tag == 0 { break }
                if tag == 1 { needed += 1 }
                if tag == 15 || tag == 29 { runpath = true }
            }
        }
        self.interpreter = interpreter
        neededLibraries = needed
        hasRunpath = runpath

        // Sections: the symbol table (type 2), else the dynamic one (11), and the names it links to.
        let sections = integer(40, 8), sectionSize = integer(58, 2), count = integer(60, 2)
        let tables = (0..<count).map { sections + $0 * sectionSize }
        let table = tables.first { integer($0 + 4, 4) == 2 } ?? tables.first { integer($0 + 4, 4) == 11 }
        var symbols: [String] = []
        var undefined: [String] = []
        if let table {
            let names = sections + integer(table + 40, 4) * sectionSize
            let namesOffset = integer(names + 24, 8)
            let offset = integer(table + 24, 8), size = integer(table + 32, 8)
            for symbol in stride(from: offset, to: offset + size, by: 24) {
                let name = string(namesOffset + integer(symbol, 4))
                // Section index 0 (SHN_UNDEF): defined elsewhere.
                if integer(symbol + 6, 2) != 0 { symbols.append(name) } else if !name.isEmpty { undefined.append(name) }
            }
        }
        definedSymbols = symbols
        undefinedSymbols = undefined
    }
}
