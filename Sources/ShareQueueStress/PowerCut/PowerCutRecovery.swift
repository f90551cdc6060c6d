import CSQLite
import Foundation
import ShareQueueCore

/// What a user runs after a power cut, on one crash state, and the invariants
/// checked after it: a producer's append, a drain (to JSON Lines, or into the
/// store where the workload used one), and a second drain, all with the real tools.
/// With a store, every record acknowledged or reported delivered into it must be
/// in it exactly once, and its `latest` must hold the newest stored record of each key.
struct PowerCutRecovery {
    let workload: PowerCutWorkload
    let tools: ToolRunner
    /// The traced run's context: what setup acknowledged and delivered, and every id printed.
    let run: PowerCutContext

    /// The state's violations, none if every invariant holds.
    /// - Parameters:
    ///   - printed: The ids producers printed before the cut.
    ///   - delivered: The ids sinks took before the cut (a store's must be in it after the recovery).
    ///   - directory: An empty directory to recover in.
    func check(_ state: FileImage, printed: [String], delivered reported: [String], in directory: String) throws -> [String] {
        try state.materialize(into: directory, groupShared: workload.groupShared)
        // What a drain wrote into a file was delivered if the file still holds it after the cut, whatever the drain reported.
        let delivered = workload.outputFile.map { PowerCutContext.ids(inJSONLines: Array((try? Data(contentsOf: URL(fileURLWithPath: directory + "/" + $0))) ?? Data())) } ?? reported
        // A copy handed over before the cut must still be there: the consumer holds its path.
        let source = (try? Data(contentsOf: URL(fileURLWithPath: run.inputs + "/photo.jpg"))) ?? Data()
        var handedOverProblems: [String] = []
        for id in delivered {
            for path in run.handedOver[id] ?? [] where (try? Data(contentsOf: URL(fileURLWithPath: directory + "/" + path))) != source {
                handedOverProblems.append("record \(id) was delivered before the cut with an attachment copy the cut took or damaged: \(path)")
            }
        }
        let context = PowerCutContext(tools: tools, root: directory, inputs: run.inputs)
        var violations = handedOverProblems
        func note(_ what: String, _ outcome: ToolRunner.Outcome) -> Bool {
            if outcome.status == 0 { return true }
            if outcome.status == -1 {
                violations.append("\(what) hung (killed after \(Int(PowerCutContext.deadline)) s)")
            } else if !PowerCutContext.documentedStatuses.contains(outcome.status) {
                violations.append("\(what) exited with the undocumented status \(outcome.status)")
            } else {
                violations.append("\(what) failed with status \(outcome.status): the queue is blocked")
            }
            return false
        }
        var mustDeliver = Set(run.acknowledged + printed)
        var drained: [String] = []
        var newestOfKey: String??
        let append = workload.typed ? try context.run("share-stress", ["power-cut-typed", "append", context.queue] + workload.recoveryAppend)
            : try context.run("share-append", ["--dir", context.queue] + workload.recoveryAppend)
        if note("the producer after the cut", append) { mustDeliver.formUnion(PowerCutContext.lines(append.output)) }
        let sink = workload.usesStore ? ["--store", context.store]
            : workload.deliversAttachments ? ["--attachments-to", directory + "/delivered"]
            : workload.coalesces ? ["--coalesce"] : []
        for attempt in ["the drain after the cut", "a second drain"] {
            if workload.typed {
                let outcome = try context.run("share-stress", ["power-cut-typed", "drain", context.queue])
                if !note(attempt, outcome) { break }
                drained += PowerCutContext.lines(outcome.output)
                continue
            }
            let outcome = try context.run("host-drain", ["--dir", context.queue, "--quiet"] + sink)
            if !note(attempt, outcome) { break }
            drained += PowerCutContext.ids(inJSONLines: outcome.output)
            if let key = workload.publishedKey, let newest = Self.newestText(of: key, in: outcome.output) { newestOfKey = newest }
            if workload.deliversAttachments { violations += Self.attachmentProblems(outcome.output, source: run.inputs + "/photo.jpg") }
        }
        var stored: Set<String> = []
        if workload.usesStore {
            let rows = Self.storedRows(context.store)
            let ids = rows.map(\.id)
            if Set(ids).count != ids.count { violations.append("the store holds a record more than once") }
            drained += ids
            stored = Set(ids)
            violations += Self.latestProblems(context.store, stored: stored, keyed: run.keyed)
            // A stored row's attachment paths are absolute, from wherever the drain that stored it ran.
            for row in rows {
                for path in row.attachmentPaths {
                    let here = path.hasPrefix(run.root + "/") ? directory + path.dropFirst(run.root.count) : path
                    if (try? Data(contentsOf: URL(fileURLWithPath: here))) != source {
                        violations.append("record \(row.id) is stored with an attachment copy that is missing or damaged: \(here)")
                    }
                }
            }
        }
        // Letters being put back (a requeue cut short) still wait: the next --requeue-dead finishes it.
        let deadLetters = ["dead-letters.log", "dead-letters.requeue"].flatMap { name in
            PowerCutContext.ids(inJSONLines: Array((try? Data(contentsOf: URL(fileURLWithPath: context.queue + "/" + name))) ?? Data()))
        }
        if let key = workload.publishedKey, append.status == 0, let value = workload.recoveryAppend.last, newestOfKey != .some(value) {
            violations.append("--if-changed published '\(value)' as key \(key)'s value, but its newest record delivered holds \(newestOfKey.map { $0 ?? "no text" } ?? "nothing")")
        }
        let damaged = Set(run.damaged)
        let intact = mustDeliver.union(drained).union(delivered).union(run.delivered).subtracting(damaged)
        let quarantine = Self.quarantineReport(context.queue, intact: intact, damaged: damaged)
        violations += quarantine.problems
        // A record damaged on purpose counts as kept once it is set aside; nowhere else is it safe.
        var lost: Set<String>
        if workload.usesStore {
            // What a drain reported stored was committed durably first: it must still be in the store, not merely delivered again.
            let unstored = Set(delivered + run.delivered).subtracting(stored).subtracting(deadLetters)
            if !unstored.isEmpty { violations.append("delivered into the store before the cut, but not in it after: \(unstored.sorted().joined(separator: " "))") }
            lost = mustDeliver.subtracting(stored).subtracting(unstored).subtracting(deadLetters).subtracting(quarantine.setAside)
        } else {
            lost = mustDeliver.subtracting(drained).subtracting(delivered).subtracting(run.delivered).subtracting(deadLetters).subtracting(quarantine.setAside)
        }
        if workload.coalesces {
            // A keyed record is done once a later record of its key was delivered: --coalesce skips it by design.
            let done = Set(drained + delivered + run.delivered)
            lost = lost.filter { id in
                guard let key = run.keyOfID[id], let index = run.appendOrder.firstIndex(of: id) else { return true }
                return !run.appendOrder[(index + 1)...].contains { run.keyOfID[$0] == key && done.contains($0) }
            }
        }
        if !lost.isEmpty { violations.append("acknowledged but never delivered: \(lost.sorted().joined(separator: " "))") }
        let invented = Set(drained).subtracting(run.known).subtracting(mustDeliver)
        if !invented.isEmpty { violations.append("delivered but never appended: \(invented.sorted().joined(separator: " "))") }
        return violations
    }

    /// What the queue set aside after recovery: the problems, and which of the `damaged` ids it holds.
    ///
    /// A record acknowledged (or delivered) intact must never be reported as damage: no
    /// entry of the quarantine file holds its id. Where the workload damaged nothing, an
    /// entry may hold damage or a torn tail, never a whole record, and no segment is kept whole.
    static func quarantineReport(_ queue: String, intact: Set<String>, damaged: Set<String>) -> (problems: [String], setAside: Set<String>) {
        var problems: [String] = []
        var setAside = Set<String>()
        let data = (try? Data(contentsOf: URL(fileURLWithPath: queue + "/" + QueueLayout.quarantine))) ?? Data()
        for line in data.split(separator: UInt8(ascii: "\n")) {
            // An entry may follow, on the same line, what a cut left of an earlier one (zeros, a torn line).
            let starts = (line.startIndex..<line.endIndex).filter { line[$0...].starts(with: Array("{\"date\":".utf8)) }
            guard let entry = starts.reversed().lazy.compactMap({ try? JSONSerialization.jsonObject(with: Data(line[$0...])) as? [String: Any] }).first,
                  let encoded = entry["data"] as? String, let bytes = Data(base64Encoded: encoded).map(Array.init) else { continue }
            let reason = entry["reason"] as? String ?? "?"
            // A damaged record's id may survive its damage: looked for in all the bytes, not only in whole records.
            for id in intact.union(damaged) where contains(bytes, Array(id.utf8)) {
                if damaged.contains(id) { setAside.insert(id) } else {
                    problems.append("record \(id) was acknowledged intact but is set aside as damage (\(reason))")
                }
            }
            // A record no producer had acknowledged at the cut may be set aside: one whose attachment's name the cut took, say.
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: queue)) ?? []
        for name in names.sorted() where QueueLayout.isKeptSegment(name) {
            guard !damaged.isEmpty else {
                problems.append("a segment was kept whole as \(name) where nothing was damaged")
                continue
            }
            let bytes = Array((try? Data(contentsOf: URL(fileURLWithPath: queue + "/" + name))) ?? Data())
            for id in damaged where contains(bytes, Array(id.utf8)) { setAside.insert(id) }
        }
        return (problems, setAside)
    }

    private static func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool { firstOffset(of: needle, in: bytes) != nil }

    /// Where `needle` first occurs in `bytes`.
    static func firstOffset(of needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard !needle.isEmpty, bytes.count >= needle.count else { return nil }
        return (0...(bytes.count - needle.count)).first { bytes[$0] == needle[0] && bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    /// The text of the last record of `key` in JSON Lines, if there is one.
    static func newestText(of key: String, in output: [UInt8]) -> String?? {
        var newest: String?? = nil
        for line in PowerCutContext.lines(output) {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], object["key"] as? String == key else { continue }
            newest = .some(object["text"] as? String)
        }
        return newest
    }

    /// The ids in a store's `records` table, repeats included, with the paths of their attachments' copies.
    static func storedRows(_ path: String) -> [(id: String, attachmentPaths: [String])] {
        query("SELECT id, attachments FROM records", in: path).compactMap { row in
            guard let id = row[0] else { return nil }
            let attachments = row[1].flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [[String: Any]] } ?? []
            return (id, attachments.compactMap { $0["path"] as? String })
        }
    }

    /// Where the store's `latest` differs from the newest record of each key the store holds:
    /// the last appended of the key's records (`keyed`, in append order) that is in `stored`.
    /// The workload makes its dates in order, so the newest by date is the last appended.
    static func latestProblems(_ path: String, stored: Set<String>, keyed: [(key: String, id: String)]) -> [String] {
        var latest: [String: String] = [:]
        for row in query("SELECT key, id FROM latest", in: path) { if let key = row[0] { latest[key] = row[1] ?? "" } }
        var problems: [String] = []
        for key in Set(keyed.map(\.key)).sorted() {
            let newest = keyed.last { $0.key == key && stored.contains($0.id) }?.id
            if latest[key] != newest {
                problems.append("the store's latest for key \(key) is \(latest[key] ?? "missing"), not the newest of its records stored, \(newest ?? "none")")
            }
        }
        return problems
    }

    /// A query's rows in the database at `path`, read only, each column as text (nil for NULL); none if it cannot be read.
    static func query(_ sql: String, in path: String) -> [[String?]] {
        var handle: OpaquePointer?
        defer { sqlite3_close(handle) }
        guard FileManager.default.fileExists(atPath: path),
              sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { return [] }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else { return [] }
        defer { sqlite3_finalize(statement) }
        var rows: [[String?]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            rows.append((0..<sqlite3_column_count(statement)).map { column in sqlite3_column_text(statement, column).map { String(cString: $0) } })
        }
        return rows
    }

    /// Delivered attachments whose copy is missing or differs from the source.
    static func attachmentProblems(_ output: [UInt8], source: String) -> [String] {
        let expected = (try? Data(contentsOf: URL(fileURLWithPath: source))) ?? Data()
        var problems: [String] = []
        for line in PowerCutContext.lines(output) {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let attachments = object["attachments"] as? [[String: Any]] else { continue }
            for attachment in attachments {
                guard let path = attachment["path"] as? String, let copy = try? Data(contentsOf: URL(fileURLWithPath: path)) else {
                    problems.append("record \(object["id"] ?? "?") was delivered without its attachment's copy")
                    continue
                }
                if copy != expected { problems.append("record \(object["id"] ?? "?") was delivered with a damaged attachment") }
            }
        }
        return problems
    }
}
