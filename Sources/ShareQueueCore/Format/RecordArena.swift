/// The stored bytes of many records, read one after another, in one allocation.
///
/// A drain reads hundreds of thousands of records a second: one allocation for
/// each record's bytes, and freeing each, cost more than checking it. A reader
/// copies each record into the arena it is filling, and every record keeps its
/// arena alive, so that the arena goes when the last of its records does.
///
/// `@unchecked Sendable`: a record's range is written once, by the reader that
/// fills the arena, before any ``StoredBytes`` refers to it, and never again;
/// only the bytes past `used` change, which no record refers to.
final class RecordArena: @unchecked Sendable {
    private let base: UnsafeMutableRawPointer
    private let capacity: Int
    /// Bytes written so far; only the reader that fills the arena reads or changes it.
    private var used = 0

    /// The size of a reader's arenas: under glibc's threshold for mapping
    /// memory apart (128 KiB), so that an arena freed is reused by the next
    /// without faulting its pages in again, and big enough that its own
    /// allocation is shared by hundreds of records.
    static let size = 64 << 10

    init(capacity: Int) {
        self.capacity = capacity
        base = UnsafeMutableRawPointer.allocate(byteCount: max(capacity, 1), alignment: 16)
    }

    deinit { base.deallocate() }

    /// Copies `bytes` in after what it holds, or returns nil if they do not fit.
    func append(_ bytes: UnsafeRawBufferPointer) -> StoredBytes? {
        guard capacity - used >= bytes.count else { return nil }
        let start = used
        if let source = bytes.baseAddress { (base + start).copyMemory(from: source, byteCount: bytes.count) }
        used += bytes.count
        return StoredBytes(arena: self, start: start, count: bytes.count)
    }

    /// The bytes at `start`, as a buffer valid while the arena lives.
    @inline(__always)
    fileprivate func bytes(from start: Int, count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + start, count: count)
    }
}

/// One record's stored bytes, in a ``RecordArena`` shared with the records read
/// before and after it.
struct StoredBytes: Sendable {
    private let arena: RecordArena
    // 32-bit offsets (an arena holds at most a 16 MiB record, or 64 KiB of them), so that
    // a drained record holding these is small enough for the C library's quickest allocations.
    private let start, length: UInt32

    /// How many bytes the record takes.
    var count: Int { Int(length) }

    fileprivate init(arena: RecordArena, start: Int, count: Int) {
        self.arena = arena
        self.start = UInt32(start)
        self.length = UInt32(count)
    }

    /// A copy of `bytes` in an arena of its own, for records not read by a segment reader.
    init(_ bytes: [UInt8]) {
        let arena = RecordArena(capacity: bytes.count)
        self = bytes.withUnsafeBytes { arena.append($0)! }
    }

    /// No bytes at all.
    static let empty = StoredBytes([])

    /// Calls `body` with the bytes, which stay valid only during the call (the
    /// caller holds this value, and so its arena, until the call returns).
    @inline(__always)
    func withUnsafeBytes<Result, Failure: Error>(_ body: (UnsafeRawBufferPointer) throws(Failure) -> Result) throws(Failure) -> Result {
        try body(arena.bytes(from: Int(start), count: Int(length)))
    }

    /// Appends the bytes to `out`, in one copy.
    func append(to out: inout [UInt8]) {
        withUnsafeBytes { out.append(contentsOf: UnsafeBufferPointer(start: $0.baseAddress?.assumingMemoryBound(to: UInt8.self), count: $0.count)) }
    }

    /// The bytes, copied into an array of their own.
    var array: [UInt8] { withUnsafeBytes { Array($0) } }
}

extension StoredBytes {
    /// The text of a string of the record that the checks accepted, where `span` says it lies.
    func string(_ span: JSONParser.StringSpan) -> String {
        guard span.hasEscapes else {
            return withUnsafeBytes { String(decoding: UnsafeRawBufferPointer(rebasing: $0[span.contents]), as: UTF8.self) }
        }
        return JSONParser(array).string(span)
    }
}
