#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif
import ShareQueueSystem
import ShareQueueCore

/// One line on standard error, rewritten in place, that shows how far a long
/// run has come: records done, of about how many, the rate and the time left.
///
/// It appears only once the run has taken `delay` seconds, so quick runs print
/// nothing, and is rewritten at most ten times a second.
package final class ProgressLine {
    /// `--progress` and `--no-progress`, for a tool's option table.
    package static let options = [
        OptionSpec(names: ["--progress"], value: nil, help: "Show a progress line on standard error even when it is not a terminal."),
        OptionSpec(names: ["--no-progress"], value: nil, help: "Never show the progress line (by default it shows on a terminal once a run takes over a second)."),
    ]

    private let tool: String
    private let delay: Double
    private let started = Host.monotonicSeconds()
    private var nextDraw: Double
    private var shown = false

    /// A progress line for `tool`, or nil when none should show: `--no-progress`,
    /// or standard error is not a terminal and `--progress` was not given.
    package init?(tool: String, arguments: ParsedArguments, delay: Double = 1) throws(ShareQueueError) {
        if arguments.has("--progress") && arguments.has("--no-progress") {
            throw ShareQueueError(.invalidArgument, "give --progress or --no-progress, not both")
        }
        guard arguments.has("--progress") || (!arguments.has("--no-progress") && isatty(2) == 1) else { return nil }
        self.tool = tool
        self.delay = delay
        nextDraw = started + delay
    }

    /// Shows `done` records and, when the caller can tell, the `fraction` of
    /// the work done (0 to 1), from which the total and the time left are estimated.
    package func update(done: Int, fraction: Double?) {
        let now = Host.monotonicSeconds()
        guard now >= nextDraw else { return }
        nextDraw = now + 0.1
        let elapsed = now - started
        var text = "\(tool): \(Self.grouped(done))"
        if let fraction, fraction > 0, done > 0 {
            let part = min(fraction, 1)
            text += " of ~\(Self.grouped(max(done, Int((Double(done) / part).rounded())))) records (\(Int(part * 100))%)"
        } else {
            text += " records"
        }
        text += ", \(Self.grouped(Int(Double(done) / max(elapsed, 0.001)))) records/s"
        if let fraction, fraction > 0 {
            text += ", \(Self.duration(elapsed * (1 - min(fraction, 1)) / fraction)) left"
        }
        draw("\r" + text + "\u{1B}[K")
        shown = true
    }

    /// Erases the line, if it was shown, so that what follows starts on a clean line.
    package func finish() {
        if shown { draw("\r\u{1B}[K") }
        shown = false
    }

    private func draw(_ text: String) { try? FileDescriptor.standardError.writeAll(Array(text.utf8)) }

    /// 1234567 as "1,234,567".
    static func grouped(_ number: Int) -> String {
        let digits = Array(String(number))
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { text += "," }
            text.append(digit)
        }
        return text
    }

    /// Seconds as "42s", "3m05s" or "2h07m".
    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.isFinite ? min(seconds.rounded(.up), 359_999) : 0)
        if whole < 60 { return "\(whole)s" }
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        if whole < 3600 { return "\(whole / 60)m\(two(whole % 60))s" }
        return "\(whole / 3600)h\(two(whole / 60 % 60))m"
    }
}
