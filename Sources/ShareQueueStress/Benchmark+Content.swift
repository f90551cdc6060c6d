import Foundation
import ShareQueueCore
import ShareQueueCodable
import ShareQueueSystem

/// Typed content: what encoding and decoding Codable values adds to an append and a drain.
extension Benchmark {
    /// Five fields, as an app's shared link might have.
    struct SharedLink: SharedContent {
        static let contentKind = Record.Kind(rawValue: "bench.link")
        var url: URL
        var title: String
        var sharedAt: Date
        var tags: [String]
        var pinned: Bool
    }

    static let sampleLink = SharedLink(url: URL(string: sampleText)!, title: "A shared page", sharedAt: Date(timeIntervalSince1970: 1_764_427_940.123),
                                       tags: ["news"], pinned: false)

    func contentFigures() throws -> [Figure] {
        [try typedAppends(), try typedDrain()] + (try asyncAndRouterDrains())
    }

    /// Typed appends of a five-field value beside appends of the same JSON given as text, both without fsync.
    func typedAppends() throws -> Figure {
        var options = AppendOptions()
        options.synchronize = false
        let count = sizes.libraryAppends
        let link = Self.sampleLink
        let json = try RecordDraft(encoding: link, source: "bench")
        guard case .value(let encoded, _) = json.content else { throw ShareQueueError(.ioError, "not a value draft") }
        let text = encoded.bytes
        // In 31 short pairs of turns, each form's into a queue of its own, each form first in every
        // other pair; the figure is the pair whose ratio is the median. An append's rate here moves by
        // half within seconds (the page cache, the machine's other work): one run of the whole count
        // each compared two moments more than two encoders (0.73 to 1.16 in three runs of one build),
        // and the rates of all turns together still let a disturbance of a few turns decide
        // (0.79 to 1.01 in ten runs; in six more, 0.81 to 0.91, where the median pair of the
        // same turns read 0.89 to 0.93).
        let turns = 31, perTurn = max(1, count / 10)
        let typed = try QueueAppender(directory: try freshQueue("typed"), options: options)
        let plain = try QueueAppender(directory: try freshQueue("json-text"), options: options)
        func timeTyped() throws -> Double {
            let start = Host.monotonicSeconds()
            for _ in 0..<perTurn { try typed.append(link, source: "bench") }
            return Host.monotonicSeconds() - start
        }
        func timeText() throws -> Double {
            let start = Host.monotonicSeconds()
            for _ in 0..<perTurn { try plain.append(RecordDraft(.json(try JSONText(validating: text)), source: "bench")) }
            return Host.monotonicSeconds() - start
        }
        var pairs: [(value: Double, floor: Double)] = []
        for turn in 0..<turns {
            let typedSeconds: Double, textSeconds: Double
            if turn.isMultiple(of: 2) {
                typedSeconds = try timeTyped()
                textSeconds = try timeText()
            } else {
                textSeconds = try timeText()
                typedSeconds = try timeTyped()
            }
            pairs.append((Double(perTurn) / typedSeconds, Double(perTurn) / textSeconds))
        }
        let median = medianPair(pairs)
        return Figure(name: "typed append, 5 fields, vs the same JSON as text", unit: "records/s", value: median.value,
                      floor: median.floor, target: ">= 0.90")
    }

    /// Five-field records decoded by a typed drain, beside Foundation's JSONDecoder
    /// decoding the same JSON one record at a time; medians of 3 interleaved runs.
    func typedDrain() throws -> Figure {
        // At most 200,000: more measures the same rate.
        let records = min(sizes.drainRecords, 200_000) / 1000 * 1000
        let filled = try freshQueue("typed-drain")
        var options = AppendOptions()
        options.synchronize = false
        let appender = try QueueAppender(directory: filled, options: options)
        let batch = Array(repeating: Self.sampleLink, count: 1000)
        for _ in 0..<(records / 1000) { try appender.append(contentsOf: batch, source: "bench") }
        guard case .value(let encoded, _) = try RecordDraft(encoding: Self.sampleLink, source: "bench").content else {
            throw ShareQueueError(.ioError, "not a value draft")
        }
        let json = Data(encoded.bytes)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        var rates: [Double] = [], peerRates: [Double] = []
        for run in 0..<3 {
            let queue = try QueueDirectory(path: try copyQueue(filled.path, as: "typed-drain-\(run)"))
            var decoded = 0
            var start = Host.monotonicSeconds()
            try QueueDrainer(directory: queue).drain(SharedLink.self) { decoded += $0.count }
            rates.append(Double(decoded) / (Host.monotonicSeconds() - start))
            guard decoded == records else { throw ShareQueueError(.ioError, "the typed drain decoded \(decoded) records, not \(records)") }
            // The peer: what an app does without the typed drain, one JSONDecoder call per record.
            start = Host.monotonicSeconds()
            var peer = 0
            for _ in 0..<records { peer += (try? decoder.decode(SharedLink.self, from: json))?.tags.count ?? 0 }
            peerRates.append(Double(peer) / (Host.monotonicSeconds() - start))
        }
        return Figure(name: "typed drain, 5 fields, vs JSONDecoder alone (peer)", unit: "records/s", value: median(rates), floor: median(peerRates),
                      target: ">= 1.20")
    }
}
