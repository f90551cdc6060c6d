/// A string that compares and hashes as its UTF-8 bytes: the key of every table
/// and set of names, record keys, ids, kinds and sources.
///
/// Swift's `String` equality is canonical equivalence: `"\u{E9}" == "e\u{301}"`,
/// so a `[String: …]` or a `Set<String>` merges names that differ as bytes, and a
/// value is lost. The queue's format speaks of bytes, so its tables do too.
/// Wrapping the string copies nothing: a native string's bytes are read in place.
package struct ByteKey: Hashable, Sendable, CustomStringConvertible {
    /// The string, exactly as given.
    package let text: String

    /// The key of `text`, by its UTF-8 bytes.
    package init(_ text: String) { self.text = text }

    package static func == (lhs: ByteKey, rhs: ByteKey) -> Bool {
        ByteKey.equal(lhs.text, rhs.text)
    }

    package func hash(into hasher: inout Hasher) {
        ByteKey.hashBytes(of: text, into: &hasher)
    }

    package var description: String { text }

    /// Whether two strings have the same UTF-8 bytes.
    package static func equal(_ lhs: String, _ rhs: String) -> Bool {
        let left = lhs.utf8, right = rhs.utf8
        guard left.count == right.count else { return false }
        // Native strings, small ones too, are contiguous UTF-8: compared in place.
        if let same = left.withContiguousStorageIfAvailable({ l in right.withContiguousStorageIfAvailable { r in l.elementsEqual(r) } }),
           let same { return same }
        return left.elementsEqual(right)
    }

    /// Whether two optional strings are both nil or have the same UTF-8 bytes.
    package static func equal(_ lhs: String?, _ rhs: String?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): true
        case (let l?, let r?): equal(l, r)
        default: false
        }
    }

    /// Whether `lhs`'s UTF-8 bytes sort before `rhs`'s: the order of "sorted by name".
    package static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }

    /// Feeds `text`'s UTF-8 bytes to `hasher`, the same bytes the same way however the string is stored.
    package static func hashBytes(of text: String, into hasher: inout Hasher) {
        let utf8 = text.utf8
        hasher.combine(utf8.count)
        if utf8.withContiguousStorageIfAvailable({ hasher.combine(bytes: UnsafeRawBufferPointer($0)) }) != nil { return }
        // A bridged string is made contiguous once, so that its bytes hash as a native string's do.
        var copy = text
        copy.makeContiguousUTF8()
        copy.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
