/// The first 128 bits of some bytes' SHA-256: 16 bytes however many were read, and no two
/// alike by chance, nor by design short of some 2^64 tries, so that a match can stand for equal bytes.
///
/// What a drain must remember of every record or key it has seen is kept this way: anything in the
/// queue directory may have been written by a producer that makes each one as long as a record.
struct Digest128: Hashable {
    let high: UInt64
    let low: UInt64

    init(_ bytes: some Collection<UInt8>) {
        var hasher = SHA256()
        hasher.update(bytes)
        let words = hasher.finishWords().map(UInt64.init)
        high = words[0] << 32 | words[1]
        low = words[2] << 32 | words[3]
    }
}
