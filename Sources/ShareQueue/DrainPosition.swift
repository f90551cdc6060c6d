/// How far delivery has got: every record before `offset` in sealed segment
/// `segment`, and in every earlier segment, has been delivered or set aside.
///
/// A sink that stores records transactionally can store this position in the
/// same transaction and hand it back through `DrainSink.deliveredPosition()`,
/// which makes delivery exactly once.
public struct DrainPosition: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public let segment: UInt64
    public let offset: Int64

    public init(segment: UInt64, offset: Int64) {
        self.segment = segment
        self.offset = offset
    }

    public static let start = DrainPosition(segment: 0, offset: 0)

    public static func < (a: DrainPosition, b: DrainPosition) -> Bool {
        (a.segment, a.offset) < (b.segment, b.offset)
    }

    /// `segment <N> offset <bytes>`, the text of the checkpoint file.
    public var description: String { "segment \(segment) offset \(offset)" }

    public init?(_ text: String) {
        let words = text.split(separator: " ")
        guard words.count == 4, words[0] == "segment", words[2] == "offset",
              let segment = UInt64(words[1]), let offset = Int64(words[3]), offset >= 0 else { return nil }
        self.init(segment: segment, offset: offset)
    }
}

/// The checkpoint file, replaced atomically (temporary file, fsync, rename)
/// after every delivered batch.
struct Checkpoint {
    let directory: QueueDirectory

    /// The stored position; a missing file is the start, a damaged one is
    /// reported and also read as the start, so records are delivered again rather than lost.
    func read(warn: (String) -> Void) throws(ShareQueueError) -> DrainPosition {
        let path = directory.checkpointPath
        do {
            let fd = try FileDescriptor.open(path, .readOnly)
            defer { fd.close() }
            let bytes = try fd.readFully(count: 128, at: 0)
            if let text = String(validating: bytes, as: UTF8.self), let position = DrainPosition(text.trimmingSuffix("\n")) {
                return position
            }
            warn("the checkpoint (\(path)) is damaged; delivering from the oldest sealed segment again")
            return .start
        } catch {
            if error.isNotFound { return .start }
            throw ShareQueueError("cannot read the checkpoint", path: path, error)
        }
    }

    func write(_ position: DrainPosition) throws(ShareQueueError) {
        let path = directory.checkpointPath
        let temporary = path + ".tmp-\(Host.processID)"
        do throws(SystemError) {
            try? FileSystem.removeFile(temporary)
            let fd = try FileDescriptor.open(temporary, .writeCreateExclusive)
            try fd.closeAfter { () throws(SystemError) in
                try fd.writeAll(Array((position.description + "\n").utf8))
                try fd.synchronize()
            }
            try FileSystem.rename(temporary, to: path)
        } catch {
            try? FileSystem.removeFile(temporary)
            throw ShareQueueError(error.isNoSpace ? "no space left to record the checkpoint" : "cannot record the checkpoint", path: path, error)
        }
    }
}
