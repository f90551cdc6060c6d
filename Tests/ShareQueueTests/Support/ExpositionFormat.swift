import Foundation

/// A strict reader of the Prometheus text exposition format, version 0.0.4,
/// written from its specification (prometheus.io, "Exposition formats"), so
/// that the metrics host-drain prints are checked without the Python client.
///
/// It throws on anything the specification does not allow, and on what
/// Prometheus's own parser rejects: a bad metric or label name, a reserved
/// (`__`) or repeated label name, an escape other than `\\`, `\"` and `\n` in
/// a label value (`\\` and `\n` in help text), a value that is not a float, a
/// TYPE or HELP given twice or after the metric's samples, a metric's samples
/// not kept together, the same series twice, and a last line without its newline.
struct Exposition {
    struct Sample: Equatable {
        let name: String
        let labels: [String: String]
        let value: Double
    }

    struct FormatError: Error, CustomStringConvertible {
        let line: Int
        let reason: String
        var description: String { "line \(line): \(reason)" }
    }

    private(set) var help: [String: String] = [:]
    private(set) var types: [String: String] = [:]
    private(set) var samples: [Sample] = []

    /// The value of the one sample named `name`, or nil if there is none.
    func value(_ name: String) -> Double? { samples.first { $0.name == name }?.value }

    init(_ text: String) throws {
        guard text.isEmpty || text.hasSuffix("\n") else { throw FormatError(line: 0, reason: "the last line does not end in a line feed") }
        var finished: Set<String> = []
        var current: String? = nil
        var series: Set<String> = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().enumerated() {
            func fail(_ reason: String) -> FormatError { FormatError(line: index + 1, reason: reason) }
            let fields = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: true)
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            if line.hasPrefix("#") {
                guard fields.count >= 3, fields[0] == "#", fields[1] == "HELP" || fields[1] == "TYPE" else { continue }  // a plain comment
                let name = String(fields[2])
                guard Self.isMetricName(name) else { throw fail("bad metric name '\(name)'") }
                if finished.contains(name) || current == name { throw fail("\(fields[1]) for \(name) after its samples") }
                let rest = fields.count > 3 ? String(fields[3]) : ""
                if fields[1] == "HELP" {
                    guard help[name] == nil else { throw fail("a second HELP for \(name)") }
                    guard let text = Self.unescape(rest, allowingQuote: false) else { throw fail("bad escape in the help of \(name)") }
                    help[name] = text
                } else {
                    guard types[name] == nil else { throw fail("a second TYPE for \(name)") }
                    guard ["counter", "gauge", "histogram", "summary", "untyped"].contains(rest) else { throw fail("unknown type '\(rest)'") }
                    types[name] = rest
                }
                continue
            }
            guard let sample = Self.sample(line) else { throw fail("not a sample: '\(line)'") }
            let family = family(of: sample.name)
            if family != current {
                if finished.contains(family) { throw fail("the samples of \(family) are not together") }
                if let current { finished.insert(current) }
                current = family
            }
            let key = sample.name + "{" + sample.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",") + "}"
            guard series.insert(key).inserted else { throw fail("the series \(key) twice") }
            samples.append(sample)
        }
    }

    /// The family a sample belongs to: its name, or the histogram's or summary's name for its parts.
    private func family(of name: String) -> String {
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            let base = String(name.dropLast(suffix.count))
            if types[base] == "histogram" || (types[base] == "summary" && suffix != "_bucket") { return base }
        }
        return name
    }

    /// `name{label="value",...} value [timestamp]`, or nil if the line is not one.
    private static func sample(_ line: Substring) -> Sample? {
        var rest = line[...]
        let name = String(rest.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ":") })
        guard isMetricName(name) else { return nil }
        rest = rest.dropFirst(name.count)
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                let label = String(rest.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") })
                guard isLabelName(label), !label.hasPrefix("__"), labels[label] == nil else { return nil }
                rest = rest.dropFirst(label.count)
                guard rest.hasPrefix("=\"") else { return nil }
                rest = rest.dropFirst(2)
                // The value runs to the first double quote not escaped.
                var raw = ""
                while let character = rest.first, character != "\"" {
                    raw.append(character)
                    rest = rest.dropFirst()
                    if character == "\\", let escaped = rest.first {
                        raw.append(escaped)
                        rest = rest.dropFirst()
                    }
                }
                guard rest.first == "\"", let value = unescape(raw, allowingQuote: true) else { return nil }
                labels[label] = value
                rest = rest.dropFirst()
                if rest.first == "," { rest = rest.dropFirst() } else if rest.first != "}" { return nil }
            }
            rest = rest.dropFirst()
        }
        let words = rest.split(separator: " ", omittingEmptySubsequences: true)
        guard rest.first == " ", (1...2).contains(words.count), let value = float(String(words[0])) else { return nil }
        if words.count == 2 { guard Int64(words[1]) != nil else { return nil } }
        return Sample(name: name, labels: labels, value: value)
    }

    static func isMetricName(_ name: String) -> Bool {
        guard let first = name.first, first.isASCII, first.isLetter || first == "_" || first == ":" else { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ":") }
    }

    static func isLabelName(_ name: String) -> Bool {
        guard let first = name.first, first.isASCII, first.isLetter || first == "_" else { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    }

    /// A float as Go's ParseFloat takes it in this format: decimal, NaN, +Inf or -Inf.
    static func float(_ text: String) -> Double? {
        switch text {
        case "NaN": return .nan
        case "+Inf", "Inf": return .infinity
        case "-Inf": return -.infinity
        default:
            guard text.range(of: #"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$"#, options: .regularExpression) != nil else { return nil }
            return Double(text)
        }
    }

    /// Text with its escapes resolved: `\\` and `\n`, and `\"` in a label value; nil for any other.
    static func unescape(_ text: String, allowingQuote: Bool) -> String? {
        var result = ""
        var escaping = false
        for character in text {
            if escaping {
                switch character {
                case "\\": result.append("\\")
                case "n": result.append("\n")
                case "\"" where allowingQuote: result.append("\"")
                default: return nil
                }
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                result.append(character)
            }
        }
        return escaping ? nil : result
    }
}
