import CChecksum

/// SHA-256 (FIPS 180-4), streamed, so that an attachment's digest is computed
/// while it is copied, without a crypto library.
///
/// Whole blocks are compressed straight from the bytes given, with the
/// processor's SHA instructions where it has them; only a last partial block is kept.
struct SHA256 {
    /// Whether this processor has the SHA instructions the C shim uses.
    static let hasInstruction = sharequeue_sha256_instruction() == 1

    private var state: [UInt32] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
    /// The bytes of a block begun but not yet whole: fewer than 64.
    private var partial: [UInt8] = []
    private var length: UInt64 = 0
    private let usesInstruction: Bool

    /// - Parameter usesInstruction: whether to compress with the processor's
    ///   instructions; false, or where it has none, in Swift (to test one against the other).
    init(usesInstruction: Bool = SHA256.hasInstruction) {
        self.usesInstruction = usesInstruction && Self.hasInstruction
    }

    mutating func update(_ bytes: some Collection<UInt8>) {
        let contiguous: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if contiguous == nil { Array(bytes).withUnsafeBytes { update($0) } }
    }

    private mutating func update(_ bytes: UnsafeRawBufferPointer) {
        length += UInt64(bytes.count)
        var rest = bytes[...]
        if !partial.isEmpty {
            let filling = rest.prefix(64 - partial.count)
            partial.append(contentsOf: filling)
            rest = rest.dropFirst(filling.count)
            guard partial.count == 64 else { return }
            partial.withUnsafeBytes { compress($0) }
            partial.removeAll(keepingCapacity: true)
        }
        let whole = rest.count / 64 * 64
        if whole > 0 { compress(UnsafeRawBufferPointer(rebasing: rest.prefix(whole))) }
        partial.append(contentsOf: rest.dropFirst(whole))
    }

    /// The digest as 64 lower-case hexadecimal digits.
    mutating func finish() -> String {
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for word in finishWords() {
            for shift in stride(from: 28, through: 0, by: -4) { out.append(hex[Int((word >> UInt32(shift)) & 0xF)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The digest as its eight 32-bit words, most significant first.
    mutating func finishWords() -> [UInt32] {
        let bits = length &* 8
        var last = partial
        last.append(0x80)
        while last.count % 64 != 56 { last.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { last.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        last.withUnsafeBytes { compress($0) }
        partial = []
        return state
    }

    static func hex(_ bytes: [UInt8]) -> String {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finish()
    }

    /// Compresses whole 64-byte blocks into the state.
    private mutating func compress(_ blocks: UnsafeRawBufferPointer) {
        guard let start = blocks.baseAddress else { return }
        let usesInstruction = self.usesInstruction
        state.withUnsafeMutableBufferPointer { state in
            if usesInstruction {
                sharequeue_sha256_blocks(state.baseAddress!, start, blocks.count / 64)
                return
            }
            withUnsafeBytes(of: sharequeue_sha256_constants) { constants in
                let k = constants.assumingMemoryBound(to: UInt32.self)
                withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
                    for offset in stride(from: 0, to: blocks.count, by: 64) {
                        Self.compress(UnsafeRawBufferPointer(start: start + offset, count: 64), into: state, constants: k, schedule: schedule)
                    }
                }
            }
        }
    }

    private static func compress(_ block: UnsafeRawBufferPointer, into state: UnsafeMutableBufferPointer<UInt32>,
                                 constants k: UnsafeBufferPointer<UInt32>, schedule w: UnsafeMutableBufferPointer<UInt32>) {
        for i in 0..<16 { w[i] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self)) }
        func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }
        for i in 16..<64 {
            let s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
            let s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
            w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, h) = (state[0], state[1], state[2], state[3], state[4], state[5], state[6], state[7])
        for i in 0..<64 {
            let s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
            let choice = (e & f) ^ (~e & g)
            let t1 = h &+ s1 &+ choice &+ k[i] &+ w[i]
            let s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
            let majority = (a & b) ^ (a & c) ^ (b & c)
            let t2 = s0 &+ majority
            (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
        }
        state[0] &+= a; state[1] &+= b; state[2] &+= c; state[3] &+= d
        state[4] &+= e; state[5] &+= f; state[6] &+= g; state[7] &+= h
    }
}
