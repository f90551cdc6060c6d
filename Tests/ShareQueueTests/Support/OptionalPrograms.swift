import Foundation
import Testing

/// Programs some tests use besides the package's own tools (shells, man and
/// groff, systemd-analyze, curl, python3, /usr/bin/time, setpriv). On a machine
/// without one, the tests that need it are skipped and say which program was
/// missing; where `CI` is set (`.ci/run` installs them all), they run and a
/// missing program fails them.
enum OptionalProgram {
    /// Whether the tests run on CI, which requires every program: `CI` is set and not empty.
    static let isCI = !(ProcessInfo.processInfo.environment["CI"] ?? "").isEmpty

    /// Where `name` is: an absolute path as it is, else the first match on `PATH`.
    static func path(_ name: String) -> String? {
        if name.hasPrefix("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return directories.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// A trait that skips the test, naming the missing programs, unless they
    /// are all there or the tests run on CI.
    static func needs(_ names: String...) -> ConditionTrait { needs(names) }

    /// `needs` for a list of programs, which may be empty.
    static func needs(_ names: [String]) -> ConditionTrait {
        let missing = names.filter { path($0) == nil }
        let reason = "not run: \(missing.joined(separator: " and ")) \(missing.count == 1 ? "is" : "are") not installed (CI requires \(missing.count == 1 ? "it" : "them"); .ci/run installs \(missing.count == 1 ? "it" : "them"))"
        return .enabled(if: isCI || missing.isEmpty, Comment(rawValue: reason))
    }

    /// The program's path; when it is missing (so only on CI, past `needs`), records a failure and returns nil.
    static func required(_ name: String) -> String? {
        if let found = path(name) { return found }
        Issue.record("\(name) is required where CI is set, and is not installed (.ci/run installs it)")
        return nil
    }
}
