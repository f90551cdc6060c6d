import Foundation
import ShareQueueCore

/// The benchmark's physical floor, `Floor/floor.c`: compiled at the start of
/// a run with the C compiler into the scratch directory, and checked to need
/// the C library alone, so that no runtime's start-up flatters a ratio.
struct CFloor {
    /// The compiled program, the compiler that made it, and what it links against.
    let program: String
    let description: String

    /// The source beside this file in the package; a benchmark runs from a checkout.
    static let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Floor/floor.c").path

    /// Compiles the floor into `directory` with `$CC`, else `clang`, else `cc`, at -O2.
    /// - Throws: `.configuration` when there is no source or no C compiler, or
    ///   when the program needs a library other than libc; `.ioError` when compiling fails.
    static func build(into directory: String) throws -> CFloor {
        guard FileManager.default.isReadableFile(atPath: source) else {
            throw ShareQueueError(.configuration, "the C floor's source is missing; run the benchmark from a checkout of the package", path: source)
        }
        let candidates = [ProcessInfo.processInfo.environment["CC"]].compactMap { $0 } + ["clang", "cc"]
        guard let compiler = candidates.lazy.compactMap(executable(named:)).first else {
            throw ShareQueueError(.configuration, "no C compiler to build the floor with: install clang or cc, or set CC")
        }
        let program = directory + "/floor"
        let compiled = try ToolRunner.run(program: compiler, ["-O2", "-o", program, source])
        guard compiled.status == 0 else {
            throw ShareQueueError(.ioError, "\(compiler) could not compile the floor (run `\(compiler) -O2 -o floor \(source)` to see why)", path: source)
        }
        let libraries = try neededLibraries(of: program)
        guard !libraries.isEmpty, libraries.allSatisfy({ $0.hasPrefix("libc.so") }) else {
            throw ShareQueueError(.configuration, "the floor must link against libc alone, but needs: \(libraries.joined(separator: ", "))", path: program)
        }
        return CFloor(program: program, description: "\(compiler) -O2 \(source); needs \(libraries.joined(separator: ", ")) only (readelf -d)")
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
