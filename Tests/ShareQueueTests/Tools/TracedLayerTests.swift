import Foundation
import Testing

/// Every change the tools make to files goes through ShareQueueSystem, where the
/// power-cut explorer's trace sees it: a call around that layer would hide a
/// write, or a reorder, from every crash state it explores.
@Suite("The traced layer")
struct TracedLayerTests {
    /// The C calls that create, change, sync, name or remove files.
    static let fileSystemCalls: Set<String> = [
        "open", "open64", "openat", "openat64", "creat", "creat64", "fopen", "fopen64", "freopen",
        "write", "pwrite", "pwrite64", "writev", "pwritev", "pwritev2", "fwrite", "fputs", "fprintf", "dprintf",
        "fsync", "fdatasync", "sync_file_range", "syncfs", "msync", "mmap", "mmap64",
        "rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat", "unlink", "unlinkat", "remove",
        "truncate", "truncate64", "ftruncate", "ftruncate64", "fallocate", "fallocate64", "posix_fallocate", "posix_fallocate64",
        "mkdir", "mkdirat", "rmdir", "mknod", "mknodat", "mkfifo", "mkfifoat", "copy_file_range", "sendfile", "sendfile64", "splice",
        "fchmod", "fchmodat", "chmod", "fchown", "fchownat", "chown", "lchown",
    ]

    /// The modules of the tools and the library an app links, but the layer itself.
    static let modules = ["ShareQueueCore", "ShareQueueCodable", "ShareQueue", "ShareQueueStore", "ToolSupport", "ShareAppend", "HostDrain",
                          "share_append", "host_drain"]

    /// Whether `symbol` is one of the file-system calls, as C names it or as the C library's
    /// Swift module wraps it (`open` and `openat` are variadic in C: Swift calls the module's own),
    /// or Foundation's way to write a file.
    static func changesFiles(_ symbol: String) -> Bool {
        if fileSystemCalls.contains(symbol) { return true }
        // A Swift name is mangled as its module's and its own, each after its length.
        for module in ["Glibc", "Musl", "Darwin"] {
            let prefix = "$s\(module.count)\(module)"
            guard symbol.hasPrefix(prefix) else { continue }
            let name = symbol.dropFirst(prefix.count).drop { $0.isNumber }
            let length = Int(symbol.dropFirst(prefix.count).prefix { $0.isNumber }) ?? 0
            if fileSystemCalls.contains(String(name.prefix(length))) { return true }
        }
        return ["11FileManagerC", "10FileHandleC", "4DataV5write"].contains { symbol.contains($0) }
    }

    /// The C calls the object files of `module` make, from the build beside the tests.
    func calls(of module: String) throws -> Set<String> {
        let folder = Executables.directory.appendingPathComponent(module + ".build")
        let objects = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".o") }
        #expect(!objects.isEmpty, "no object files in \(folder.path)")
        var calls = Set<String>()
        for object in objects {
            let image = try #require(try ELFImage(path: folder.appendingPathComponent(object).path), "\(object) is not an ELF file")
            calls.formUnion(image.undefinedSymbols)
        }
        return calls
    }

    #if os(Linux)
    @Test("No module but ShareQueueSystem calls the C library to change a file", arguments: modules)
    func noFileSystemCallAroundTheLayer(_ module: String) throws {
        let around = try calls(of: module).filter(Self.changesFiles)
        #expect(around.isEmpty, "\(module) calls \(around.sorted().joined(separator: ", ")) directly; call ShareQueueSystem, whose trace the power-cut explorer reads")
    }

    @Test("The check sees the calls ShareQueueSystem makes")
    func theCheckSeesCalls() throws {
        let calls = try calls(of: "ShareQueueSystem")
        for call in ["pwrite", "fdatasync", "renameat", "linkat", "unlinkat", "ftruncate", "mkdirat"] {
            #expect(calls.contains(call) || calls.contains(call + "64"), "ShareQueueSystem's object files do not show \(call)")
        }
        // `openat` as Swift calls it, through the C library's module.
        #expect(calls.contains { Self.changesFiles($0) && $0.contains("6openat") }, "ShareQueueSystem's object files do not show openat")
    }
    #endif
}
