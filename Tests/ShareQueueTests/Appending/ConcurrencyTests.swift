import Foundation
import Testing
import ShareQueueCore

/// Many processes at once, and processes killed for real.
@Suite("Concurrency and kills", .serialized, .runTimeLimit(minutes: 3))
struct ConcurrencyTests {
    @Test("8 producers x 200 appends with a concurrent drain loop deliver exactly 1,600 distinct records")
    func concurrentProducersAndDrains() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let delivered = scratch.file("delivered")
        let done = scratch.file("producers-done")
        let loop = Process()
        loop.executableURL = URL(fileURLWithPath: "/bin/sh")
        loop.arguments = ["-c", """
            while [ ! -e "$2" ]; do "$0" --dir "$1" -q --wait 30 >> "$3" || exit 1; done
            "$0" --dir "$1" -q --wait 30 >> "$3"
            """, Executables.path("host-drain"), queue.path, done, delivered]
        try loop.run()

        var producers: [(Process, String)] = []
        for p in 1...8 {
            let acknowledged = scratch.file("acknowledged-\(p)")
            let producer = Process()
            producer.executableURL = URL(fileURLWithPath: "/bin/sh")
            producer.arguments = ["-c", """
                i=1; while [ $i -le 200 ]; do "$0" --dir "$1" "producer $2 record $i" >> "$3" || exit 1; i=$((i+1)); done
                """, Executables.path("share-append"), queue.path, String(p), acknowledged]
            try producer.run()
            producers.append((producer, acknowledged))
        }
        var acknowledged: [String] = []
        for (producer, file) in producers {
            producer.waitUntilExit()
            #expect(producer.terminationStatus == 0)
            acknowledged += try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map(String.init)
        }
        _ = FileManager.default.createFile(atPath: done, contents: nil)
        loop.waitUntilExit()
        #expect(loop.terminationStatus == 0)

        let records = try jsonObjects(Data(contentsOf: URL(fileURLWithPath: delivered)))
        let deliveredIDs = records.map { $0["id"] as! String }
        #expect(acknowledged.count == 1600)
        #expect(deliveredIDs.count == 1600)
        #expect(Set(deliveredIDs).count == 1600)
        #expect(Set(deliveredIDs) == Set(acknowledged))
        // Each producer's records arrive in the order it appended them.
        for p in 1...8 {
            let texts = records.map { $0["text"] as! String }.filter { $0.hasPrefix("producer \(p) record ") }
            #expect(texts == (1...200).map { "producer \(p) record \($0)" })
        }
    }

    @Test("A drainer killed with SIGKILL in the middle of a slow sink loses nothing; the rerun delivers every record")
    func drainerKilledMidSink() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let delivered = scratch.file("delivered")
        let appended = try queue.appendLines((1...100).map { "record \($0)" })
        #expect(appended.count == 100)
        // The sink takes each batch, then is slow to confirm it.
        let slow = try RunningTool("host-drain", ["--dir", queue.path, "--batch", "10", "--exec", "cat >> '\(delivered)'; sleep 0.2"], in: scratch)
        try waitUntil("three batches to reach the sink") {
            (try? String(contentsOfFile: delivered, encoding: .utf8))?.split(separator: "\n").count ?? 0 >= 30
        }
        slow.kill()
        #expect(slow.wait().status == 128 + SIGKILL)
        let before = try ids(in: Data(contentsOf: URL(fileURLWithPath: delivered)))
        #expect(before.count < 100)

        let rerun = try queue.drain(["--exec", "cat >> '\(delivered)'", "--wait", "10"])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let all = try ids(in: Data(contentsOf: URL(fileURLWithPath: delivered)))
        #expect(Set(all) == Set(appended))
        // Only the batch in hand when the drainer died may come twice.
        #expect(all.count - Set(all).count <= 10)
        #expect(try queue.status()["pending"] as? Int == 0)
    }

    @Test("A producer finishes in well under a second while a drain with a slow sink runs")
    func producerNotBlockedBySlowSink() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        try queue.append(["waiting"])
        let started = scratch.file("started")
        let release = scratch.file("release")
        let slow = try RunningTool("host-drain", ["--dir", queue.path, "--exec", "cat > /dev/null; touch '\(started)'; while [ ! -e '\(release)' ]; do sleep 0.02; done"], in: scratch)
        defer { slow.kill() }
        try waitUntil("the slow sink to hold its batch") { FileManager.default.fileExists(atPath: started) }
        let clock = ContinuousClock()
        var appended: ProcessResult? = nil
        let elapsed = try clock.measure { appended = try queue.append(["while draining"]) }
        #expect(appended?.status == 0)
        #expect(elapsed < .milliseconds(500), "share-append took \(elapsed)")
        _ = FileManager.default.createFile(atPath: release, contents: nil)
        #expect(slow.wait().status == 0)
        let rest = try queue.drain()
        #expect(try jsonObjects(rest.stdout).map { $0["text"] as! String } == ["while draining"])
    }

    /// Records short and long: an appender checks a short last frame in one read, a long one in two.
    @Test("A torn tail left by a killed writer is set aside by the next append; every whole record is delivered",
          arguments: [3, 3000])
    func tornTailRepairedByAppend(length: Int) throws {
        let queue = TestQueue()
        let long = String(repeating: "x", count: length)
        let first = try queue.appendLines(["one" + long, "two" + long])
        // A whole last frame, long or short, is not mistaken for a torn one.
        let second = try queue.append([long])
        #expect(second.status == 0)
        #expect(try queue.status()["quarantined"] as? Int == 0)
        let pending = queue.pendingPath
        let whole = try Data(contentsOf: URL(fileURLWithPath: pending))
        // A writer that died half-way through a copy of the last record: its frame is the
        // payload's length (the trailer's first four bytes, little-endian) and 20 bytes.
        let trailer = [UInt8](whole.suffix(8))
        let frameSize = 20 + (Int(trailer[0]) | Int(trailer[1]) << 8 | Int(trailer[2]) << 16 | Int(trailer[3]) << 24)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: pending))
        try handle.seekToEnd()
        try handle.write(contentsOf: whole.suffix(frameSize).prefix(frameSize / 2))
        try handle.close()
        let third = try queue.append(["three"])
        #expect(third.status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: pending)).count > whole.count)
        let object = try queue.status()
        #expect(object["quarantined"] as? Int == 1)
        #expect(object["pending"] as? Int == 4)
        let drain = try queue.drain()
        #expect(drain.status == 0)
        #expect(try ids(in: drain.stdout) == first + second.lines + third.lines)
        let quarantine = try queue.quarantine()
        #expect(quarantine.count == 1)
        #expect(quarantine[0]["tornTail"] as? Bool == true)
        #expect(quarantine[0]["offset"] as? Int == whole.count)
    }

    /// Producer and drain read a segment by one rule (§6.2, §9.2): a partial header magic
    /// after damage is part of the damage, so no append cuts it and a drain sets it aside with it.
    @Test("A partial header magic at the end of damage is neither cut by an append nor set aside apart",
          arguments: [[0xFF], [0xFF, 0x53], [0xFF, 0x53, 0x51]], [3, 20])
    func partialMagicAfterDamage(magic: [UInt8], damageLength: Int) throws {
        let queue = TestQueue()
        let first = try queue.appendLines(["one"])
        let pending = queue.pendingPath
        let whole = try Data(contentsOf: URL(fileURLWithPath: pending))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: pending))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 0x41, count: damageLength) + Data(magic))
        try handle.close()
        let damaged = try Data(contentsOf: URL(fileURLWithPath: pending))
        let second = try queue.append(["two"])
        #expect(second.status == 0)
        // Whole, with the new record's header right after it: a cut would have put that header over the magic's bytes.
        let after = try Data(contentsOf: URL(fileURLWithPath: pending))
        #expect(after.prefix(damaged.count) == damaged && after.dropFirst(damaged.count).prefix(4) == Data([0xFF, 0x53, 0x51, 0x52]), "the append cut the damage")
        #expect(try queue.quarantine().isEmpty)
        let drain = try queue.drain()
        #expect(try ids(in: drain.stdout) == first + second.lines)
        let quarantine = try queue.quarantine()
        #expect(quarantine.map { [$0["offset"] as! Int, $0["length"] as! Int] } == [[whole.count, damageLength + magic.count]])
        #expect(quarantine.map { $0["tornTail"] as! Bool } == [false])
    }

    @Test("A torn tail found by a drain, and a damaged record in the middle, are set aside; the rest is delivered")
    func damageFoundByDrain() throws {
        let queue = TestQueue()
        let appended = try queue.appendLines(["one", "two", "three", "four"])
        let pending = queue.pendingPath
        var bytes = try Data(contentsOf: URL(fileURLWithPath: pending))
        let originalSize = bytes.count
        let secondStart = 20 + Int(bytes[4]) + Int(bytes[5]) << 8
        bytes[secondStart + 40] ^= 0x20          // damage inside the second record
        bytes += bytes.prefix(secondStart / 2)   // and a torn tail
        try bytes.write(to: URL(fileURLWithPath: pending))
        let drain = try queue.drain()
        #expect(drain.status == 0)
        #expect(try ids(in: drain.stdout) == [appended[0], appended[2], appended[3]])
        let setAside = try queue.setAsideEvents()
        #expect(setAside.count == 2 && setAside.allSatisfy { drain.warned($0) }, "\(drain.stderr)")
        let quarantine = try queue.quarantine()
        #expect(quarantine.map { $0["offset"] as! Int } == [secondStart, originalSize])
        #expect(quarantine.map { $0["reason"] as! String }.first == "checksum mismatch")
        let more = try queue.append(["five"])
        let next = try queue.drain()
        #expect(try ids(in: next.stdout) == more.lines)
    }
}
