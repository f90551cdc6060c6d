import Foundation
import Testing

/// Two drains at once: `drain.lock` is a file, which a member of a shared queue's group can
/// remove while a drain holds it, so that the next drain runs beside it. Records may then be
/// delivered twice, never lost: no drain seals a segment number that another has delivered and
/// checkpointed, or removes a segment another sealed.
@Suite("Drains that overlap", .serialized, .runTimeLimit(minutes: 2))
struct OverlappingDrainTests {
    @Test("A drain that listed the queue before another drained and removed a segment does not seal the next records under that segment's number")
    func staleDrainSealsNoDeliveredNumber() throws {
        let queue = TestQueue()
        let scratch = queue.scratch
        // The sink of the slow drain waits for `release` once; the next call after that fails once (75).
        let sink = scratch.file("sink.sh")
        try """
        #!/bin/sh
        cat >> '\(scratch.file("delivered"))'.$$
        if mv '\(scratch.file("hold"))' '\(scratch.file("holding"))' 2>/dev/null; then
          while [ ! -e '\(scratch.file("release"))' ]; do sleep 0.02; done
          : > '\(scratch.file("fail"))'
        elif mv '\(scratch.file("fail"))' '\(scratch.file("failed"))' 2>/dev/null; then
          rm -f '\(scratch.file("delivered"))'.$$
          exit 75
        fi
        cat '\(scratch.file("delivered"))'.$$ >> '\(scratch.file("delivered"))'
        rm -f '\(scratch.file("delivered"))'.$$
        """.write(toFile: sink, atomically: true, encoding: .utf8)
        #expect(chmod(sink, 0o755) == 0)
        var acknowledged = try queue.append(text: "r1") + queue.append(text: "r2")
        // Its destination down: the records stay in segment 1.
        #expect(try queue.drain(["--exec", "cat > /dev/null; exit 75"]).status == 75)
        FileManager.default.createFile(atPath: scratch.file("hold"), contents: nil)
        let slow = try RunningTool("host-drain", ["--dir", queue.path, "--exec", sink], in: scratch)
        try waitUntil("the slow drain to be in its sink") { FileManager.default.fileExists(atPath: scratch.file("holding")) }
        acknowledged += try queue.append(text: "r3") + queue.append(text: "r4")
        try FileManager.default.removeItem(atPath: queue.file("drain.lock"))
        // Beside it: delivers segment 1, seals and delivers segment 2, checkpoints it and removes it.
        let beside = try queue.drain(["--exec", sink])
        #expect(beside.status == 0, "\(beside.stderr)")
        acknowledged += try queue.append(text: "r5") + queue.append(text: "r6")
        FileManager.default.createFile(atPath: scratch.file("release"), contents: nil)
        let stale = slow.wait()
        #expect(stale.status == 75, "\(stale.stderr)")
        var delivered = try ids(in: Data(contentsOf: URL(fileURLWithPath: scratch.file("delivered"))))
        for _ in 0..<2 {
            let next = try queue.drain()
            #expect(next.status == 0, "\(next.stderr)")
            delivered += try ids(in: next.stdout)
        }
        let lost = acknowledged.filter { !delivered.contains($0) }
        #expect(lost.isEmpty, "lost \(lost.count) of \(acknowledged.count): \(lost)")
    }
}

extension OverlappingDrainTests {
    @Test("A drain that delivered a segment removes only that file: not a segment another drain sealed under its name since")
    func removesOnlyWhatItDelivered() throws {
        let queue = TestQueue()
        var acknowledged = try queue.append(text: "r1")
        // Delivered segment 1 and checkpointed it; stopped before removing it.
        let first = try StoppedLockHolderTests.stoppedTool("host-drain", at: "drain-before-remove", ["--dir", queue.path], in: queue.scratch)
        defer { first.kill(); _ = first.wait() }
        // Another drain took segment 1 away, and a third wrote the checkpoint back (both ran beside the first,
        // drain.lock removed): a fourth then seals new records as segment 1, and stops once it let the producers go.
        try FileManager.default.moveItem(atPath: queue.file("sealed-000000000001.log"), toPath: queue.scratch.file("taken-by-another"))
        try FileManager.default.removeItem(atPath: queue.file("checkpoint"))
        acknowledged += try queue.append(text: "r2")
        try FileManager.default.removeItem(atPath: queue.file("drain.lock"))
        let fourth = try StoppedLockHolderTests.stoppedTool("host-drain", at: "drain-seal-unlocked", ["--dir", queue.path], in: queue.scratch)
        defer { fourth.kill(); _ = fourth.wait() }
        kill(first.pid, SIGCONT)
        let firstResult = first.wait()
        #expect(firstResult.status == 0, "\(firstResult.stderr)")
        #expect(FileManager.default.fileExists(atPath: queue.file("sealed-000000000001.log")), "the first drain removed a segment it did not deliver")
        kill(fourth.pid, SIGCONT)
        let fourthResult = fourth.wait()
        #expect(fourthResult.status == 0, "\(fourthResult.stderr)")
        let delivered = try ids(in: firstResult.stdout) + ids(in: fourthResult.stdout) + ids(in: try queue.drain().stdout)
        #expect(Set(delivered) == Set(acknowledged))
    }
}
