import ShareQueueCore
import ShareQueueSystem

/// `share-stress produce`: appends records through the library in a loop, as
/// an app extension linking ShareQueue would, printing `<sequence> <id>` once
/// each append has returned.
enum LibraryProducer {
    static func run(directory: String, producer: Int, first: Int, count: Int) throws(ShareQueueError) {
        let appender = try QueueAppender(directory: try QueueDirectory(path: directory))
        for sequence in first..<(first + count) {
            let id = try appender.append(RecordDraft(.text(StressText.make(producer: producer, sequence: sequence)), source: "stress-p\(producer)"))
            do {
                try FileDescriptor.standardOutput.writeAll(Array("\(sequence) \(id)\n".utf8))
            } catch {
                throw ShareQueueError(.ioError, "cannot report an appended id", underlying: error)
            }
        }
    }

    /// The `<sequence> <id>` lines a producer printed before it ended or was killed.
    static func acknowledgements(_ output: [UInt8]) -> [(sequence: Int, id: String)] {
        var lines = output.split(separator: 0x0A, omittingEmptySubsequences: false)
        lines.removeLast()
        return lines.compactMap { line in
            let words = String(decoding: line, as: UTF8.self).split(separator: " ")
            guard words.count == 2, let sequence = Int(words[0]) else { return nil }
            return (sequence, String(words[1]))
        }
    }
}
