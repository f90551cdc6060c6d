/// Records a sink refused too often, set aside with the last error
/// (`dead-letters.log`, one JSON object a line), and the refusal counts of
/// records still queued (`attempts`, `<id> <count>` a line).
struct DeadLetters {
    let directory: QueueDirectory
    var path: String { directory.path + "/dead-letters.log" }
    var requeuePath: String { directory.path + "/dead-letters.requeue" }
    var attemptsPath: String { directory.path + "/attempts" }

    /// Appends one dead letter in a single write and makes it durable.
    func add(_ drained: DrainedRecord, attempts: Int, error: String) throws(ShareQueueError) {
        var line = Array("{\"date\":".utf8)
        JSONWriter.appendString(Timestamp.now(), to: &line)
        line += Array(",\"attempts\":\(attempts),\"error\":".utf8)
        JSONWriter.appendString(error, to: &line)
        line += Array(",\"record\":".utf8) + drained.storedJSON + Array("}\n".utf8)
        do {
            let file = try FileDescriptor.openOwnFile(path, .appendCreate)
            try file.closeAfter { () throws(SystemError) in
                try file.writeAll(line)
                try file.synchronize()
            }
        } catch {
            throw ShareQueueError("cannot set a refused record aside", path: path, error)
        }
    }

    func count() -> Int { lines(of: path).count + lines(of: requeuePath).count }

    /// The stored JSON of every dead letter in `file`, byte for byte.
    func records(in file: String) throws(ShareQueueError) -> [[UInt8]] {
        let marker = Array(",\"record\":".utf8)
        return try lines(of: file).map { line throws(ShareQueueError) in
            // `add` writes date, attempts and error, then the record, last. The first
            // `,"record":` is the wrapper's: inside the error string quotes are escaped.
            guard let start = line.firstRange(of: marker)?.upperBound, line.last == UInt8(ascii: "}"),
                  case let record = Array(line[start..<(line.count - 1)]), (try? RecordSummary(jsonBytes: record)) != nil else {
                throw ShareQueueError(.badData, "a dead letter is damaged", path: file)
            }
            return record
        }
    }

    /// Whether a dead letter for the record `id` exists already.
    func contains(_ id: String) -> Bool {
        let letters = (try? records(in: path)) ?? []
        return letters.contains { (try? RecordSummary(jsonBytes: $0))?.id == id }
    }

    private func lines(of file: String) -> [[UInt8]] {
        guard let descriptor = try? FileDescriptor.open(file, .readOnly) else { return [] }
        defer { descriptor.close() }
        guard let status = try? descriptor.status(), status.isRegularFile,
              let bytes = try? descriptor.readFully(count: Int(status.size), at: 0) else { return [] }
        return bytes.split(separator: 0x0A).map(Array.init)
    }

    func attempts() -> [String: Int] {
        var counts: [String: Int] = [:]
        for line in lines(of: attemptsPath) {
            let words = String(decoding: line, as: UTF8.self).split(separator: " ")
            if words.count == 2, let count = Int(words[1]) { counts[String(words[0])] = count }
        }
        return counts
    }

    func saveAttempts(_ counts: [String: Int]) throws(ShareQueueError) {
        if counts.isEmpty {
            try? FileSystem.removeFile(attemptsPath)
            return
        }
        let temporary = attemptsPath + ".tmp-\(Host.processID)"
        do throws(SystemError) {
            try? FileSystem.removeFile(temporary)
            let file = try FileDescriptor.open(temporary, .writeCreateExclusive)
            try file.closeAfter { () throws(SystemError) in
                try file.writeAll(Array(counts.map { "\($0.key) \($0.value)\n" }.joined().utf8))
                try file.synchronize()
            }
            try FileSystem.rename(temporary, to: attemptsPath)
        } catch {
            try? FileSystem.removeFile(temporary)
            throw ShareQueueError("cannot record a refusal", path: attemptsPath, error)
        }
    }
}

private extension Array where Element == UInt8 {
    /// The range of the first occurrence of `pattern`.
    func firstRange(of pattern: [UInt8]) -> Range<Int>? {
        guard pattern.count <= count else { return nil }
        for start in 0...(count - pattern.count) where self[start..<(start + pattern.count)].elementsEqual(pattern) {
            return start..<(start + pattern.count)
        }
        return nil
    }
}
