import Foundation
import Testing

/// README's first command on a fresh machine: the demo says what is missing
/// before it builds anything, instead of failing inside a compiler error.
@Suite("Demo script")
struct DemoScriptTests {
    static let demo = ServiceSampleTests.samples + "/demo.sh"

    @Test("Without swift on the PATH, the demo names what is missing and exits 69")
    func namesWhatIsMissing() throws {
        let scratch = TemporaryDirectory()
        let check = try run("/usr/bin/env", ["PATH=/usr/bin:/bin", "bash", Self.demo, "--check"], in: scratch)
        #expect(check.status == 69, "\(check.stderr)")
        #expect(check.stderr.contains("missing"))
        #expect(check.stderr.contains("Swift toolchain"))
    }

    @Test("On this machine the demo's check passes")
    func readyHere() throws {
        let scratch = TemporaryDirectory()
        let check = try run("/usr/bin/env", ["bash", Self.demo, "--check"], in: scratch)
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.output == "demo.sh: ready\n")
    }
}
