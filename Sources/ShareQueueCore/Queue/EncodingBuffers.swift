/// An appender's buffers for encoding: each record's JSON, then all the frames of an append.
struct EncodingBuffers {
    var payload: [UInt8] = []
    var frames: [UInt8] = []
    /// Kept between appends up to this capacity; one large append does not hold its memory for good.
    private static let keptCapacity = 1 << 16

    /// These buffers, emptied, leaving empty ones in their place while an append uses them.
    mutating func take() -> EncodingBuffers {
        var taken = EncodingBuffers()
        swap(&taken, &self)
        taken.frames.removeAll(keepingCapacity: true)
        return taken
    }

    /// Keeps `buffers` for the next append unless they grew large.
    mutating func keep(_ buffers: EncodingBuffers) {
        if buffers.payload.capacity <= Self.keptCapacity { payload = buffers.payload }
        if buffers.frames.capacity <= Self.keptCapacity { frames = buffers.frames }
    }
}
