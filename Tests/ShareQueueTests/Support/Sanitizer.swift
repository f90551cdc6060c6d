import Foundation
import Testing

/// The sanitizer this test process was built with, if any: `swift test
/// --sanitize=address` or `--sanitize=thread` builds the tools it spawns with
/// the same one, so it is told by the runtime's entry point, linked into this
/// process and exported, rather than by anything a run's environment says.
enum Sanitizer: String {
    case address, thread

    static let current: Sanitizer? = {
        if dlsym(nil, "__asan_init") != nil { return .address }
        if dlsym(nil, "__tsan_init") != nil { return .thread }
        return nil
    }()

    /// Runs a test only in a build without a sanitizer, saying why.
    static func absent(_ why: String) -> ConditionTrait {
        .enabled(if: current == nil, "under a sanitizer, \(why)")
    }
}

/// How many times the time and memory a run needs grow in a build under the
/// address or thread sanitizer (whose runtime is then in this process too):
/// shadow memory and checks. 1 in a normal build, so bounds stay as tight there.
/// The one factor every time and memory bound of the tests is widened by.
let sanitizerAllowance: Int = Sanitizer.current == nil ? 1 : 8

/// Under the address sanitizer, a tool keeps up to 256 MiB of freed memory
/// aside by default to catch uses after free; a small reserve makes its peak
/// memory speak of the tool rather than of the sanitizer. Other options the
/// run set (where reports go, the suppressions) are kept.
let sanitizerEnvironment: [String: String] = {
    guard Sanitizer.current == .address else { return [:] }
    let options = ProcessInfo.processInfo.environment["ASAN_OPTIONS"].map { $0 + ":" } ?? ""
    return ["ASAN_OPTIONS": options + "quarantine_size_mb=16"]
}()

/// The environment for a tool run under a tracer (`strace`). LeakSanitizer stops
/// the process's threads with ptrace to scan them, which a traced process cannot
/// allow: its check at exit would fail as a report. The address checks stay on.
let tracedEnvironment: [String: String] = {
    guard Sanitizer.current == .address else { return [:] }
    let options = ProcessInfo.processInfo.environment["ASAN_OPTIONS"].map { $0 + ":" } ?? ""
    return ["ASAN_OPTIONS": options + "detect_leaks=0"]
}()

/// Files a sanitizer's runtime opens as a process starts, before the program runs
/// (its command line and environment, for its options), each as `strace` quotes it.
let sanitizerStartupFiles: [String] = Sanitizer.current == nil ? [] : ["\"/proc/self/cmdline\"", "\"/proc/self/environ\""]
