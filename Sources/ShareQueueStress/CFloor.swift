import Foundation
import ShareQueueCore

/// The benchmark's physical floor, `Floor/floor.c`: compiled at the start of
/// a run with the C compiler into the scratch directory, and checked to need
/// the C library alone, so that no runtime's start-up flatters a ratio.
struct CFloor {
    /// The compiled program, the compiler that made it, and what it links against.
    let program: String
    let description: String

    /// The sources beside this file in the package; a benchmark runs from a checkout.
    static let floorSource = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Floor/floor.c").path
    static let storeFloorSource = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Floor/store-floor.c").path
    static let peakMemorySource = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Floor/peak-memory.c").path

    /// Compiles the floor into `directory` with `$CC`, else `clang`, else `cc`, at -O2.
    /// - Throws: `.configuration` when there is no source or no C compiler, or
    ///   when the program needs a library other than libc; `.ioError` when compiling fails.
    static func build(into directory: String) throws -> CFloor {
        try build(floorSource, as: "floor", linking: [], into: directory)
    }

    /// Compiles `Floor/peak-memory.c`, which measures a tool's peak memory from a process of its own
    /// size, since a process that share-stress spawns counts share-stress's memory as its own.
    static func buildPeakMemory(into directory: String) throws -> CFloor {
        try build(peakMemorySource, as: "peak-memory", linking: [], into: directory)
    }

    /// Compiles the store floor (`Floor/store-floor.c`), which may need libsqlite3 besides libc.
    static func buildStoreFloor(into directory: String) throws -> CFloor {
        try build(storeFloorSource, as: "store-floor", linking: ["sqlite3"], into: directory)
    }

    /// The NATS sample's floor (`Samples/Forwarders/NATS/Floor/publish-floor.c`): the C client
    /// publishing alone, which may need libnats besides libc.
    static let forwardingFloorSource = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Samples/Forwarders/NATS/Floor/publish-floor.c").standardized.path

    /// Compiles the NATS sample's floor, linked with libnats.
    static func buildForwardingFloor(into directory: String) throws -> CFloor {
        try build(forwardingFloorSource, as: "publish-floor", linking: ["nats"], into: directory)
    }

    /// Compiles `source` into `directory/name`, linked with `libraries` (`-l`), and checks
    /// that it needs libc and those libraries alone.
    private static func build(_ source: String, as name: String, linking libraries: [String], into directory: String) throws -> CFloor {
        guard FileManager.default.isReadableFile(atPath: source) else {
            throw ShareQueueError(.configuration, "the C floor's source is missing; run the benchmark from a checkout of the package", path: source)
        }
        let candidates = [ProcessInfo.processInfo.environment["CC"]].compactMap { $0 } + ["clang", "cc"]
        guard let compiler = candidates.lazy.compactMap(executable(named:)).first else {
            throw ShareQueueError(.configuration, "no C compiler to build the floor with: install clang or cc, or set CC")
        }
        let program = directory + "/" + name
        let flags = ["-O2", "-o", program, source] + libraries.map { "-l" + $0 }
        let compiled = try ToolRunner.run(program: compiler, flags)
        guard compiled.status == 0 else {
            throw ShareQueueError(.ioError, "\(compiler) could not compile the floor (run `\(compiler) \(flags.joined(separator: " "))` to see why)", path: source)
        }
        let needed = try neededLibraries(of: program)
        let allowed = ["libc.so"] + libraries.map { "lib\($0).so" }
        guard needed.contains(where: { $0.hasPrefix("libc.so") }), needed.allSatisfy({ library in allowed.contains { library.hasPrefix($0) } }) else {
            throw ShareQueueError(.configuration, "the floor must link against \(allowed.joined(separator: " and ")) alone, but needs: \(needed.joined(separator: ", "))", path: program)
        }
        let linked = (["-O2"] + libraries.map { "-l" + $0 }).joined(separator: " ")
        return CFloor(program: program, description: "\(compiler) \(linked) \(source); needs \(needed.joined(separator: ", ")) only (readelf -d)")
    }

    /// The shared libraries a program names as NEEDED, read with `readelf -d`.
    static func neededLibraries(of program: String) throws -> [String] {
        guard let readelf = executable(named: "readelf") else {
            throw ShareQueueError(.configuration, "no readelf to check what the floor links against: install binutils")
        }
        let outcome = try ToolRunner.run(program: readelf, ["-d", program])
        guard outcome.status == 0 else { throw ShareQueueError(.ioError, "readelf -d failed", path: program) }
        // Lines such as: 0x0000000000000001 (NEEDED)  Shared library: [libc.so.6]
        return String(decoding: outcome.output, as: UTF8.self).split(separator: "\n").filter { $0.contains("(NEEDED)") }.compactMap { line in
            guard let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]") else { return nil }
            return String(line[line.index(after: open)..<close])
        }
    }

    /// The first executable file called `name` on PATH (or `name` itself when it holds a slash).
    static func executable(named name: String) -> String? {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { $0 + "/" + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
