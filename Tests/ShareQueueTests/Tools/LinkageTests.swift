import Foundation
import Testing

/// What the tools link. The producer holds the core alone, never Foundation;
/// on Linux, share-append and host-drain are static position-independent
/// executables: no program loader and no shared library to start, and still
/// loaded at a random address.
@Suite("Linkage")
struct LinkageTests {
    @Test("share-append holds no Foundation symbol, though the library an app imports re-exports Foundation-based modules")
    func shareAppendWithoutFoundation() throws {
        let binary = try Data(contentsOf: URL(fileURLWithPath: Executables.path("share-append")))
        // Swift's mangled names spell a module as its length and name.
        let modules = ["10Foundation", "20FoundationEssentials", "17ShareQueueCodable"]
        for module in modules {
            #expect(binary.range(of: Data(module.utf8)) == nil, "share-append links \(module.dropFirst(2))")
        }
        // The check can see a module: the stress tool links both.
        let stress = try Data(contentsOf: URL(fileURLWithPath: Executables.path("share-stress")))
        #expect(stress.range(of: Data("17ShareQueueCodable".utf8)) != nil)

        // Linked statically, what a library brings becomes the tool's own symbols: none is Foundation's.
        guard let image = try ELFImage(path: Executables.path("share-append")) else { return }
        let foundation = image.definedSymbols.filter { symbol in modules.contains { symbol.contains($0) } }
        #expect(foundation.isEmpty, "share-append defines \(foundation.prefix(5))")
        // The symbols are there to be seen: the core's, and the C library's when it is linked in.
        let holdsCore = image.definedSymbols.contains { $0.contains("14ShareQueueCore") }
        #expect(holdsCore, "share-append's symbol table shows no symbol of the core")
    }

    #if os(Linux)
    @Test("Released, share-append and host-drain are static position-independent executables that run: ASLR, no loader, no shared library, no runpath",
          Executables.needsRelease, arguments: ["share-append", "host-drain"])
    func staticPositionIndependent(tool: String) throws {
        let path = Executables.releaseDirectory.appendingPathComponent(tool).path
        let image = try #require(try ELFImage(path: path), "\(path) is not a 64-bit ELF file")
        #expect(image.isPositionIndependent, "\(tool) is not position-independent: it would load at a fixed address")
        #expect(image.interpreter == nil, "\(tool) asks for the program loader \(image.interpreter ?? "")")
        #expect(image.neededLibraries == 0, "\(tool) needs \(image.neededLibraries) shared libraries")
        let hasRunpath = image.hasRunpath
        #expect(!hasRunpath, "\(tool) has a runpath, which glibc's static start-up refuses")
        let holdsCLibrary = image.definedSymbols.contains("__libc_start_main")
        #expect(holdsCLibrary, "\(tool) does not hold the C library")
        let version = try run(path, ["--version"], in: TemporaryDirectory())
        #expect(version.status == 0, "\(version.stderr)")
        #expect(version.output.hasPrefix(tool + " "), "\(version.output)")
    }
    
    @Test("The tools the tests run, a debug build, are linked dynamically, as a sanitizer's runtime needs", arguments: ["share-append", "host-drain"])
    func debugBuildIsDynamic(tool: String) throws {
        let image = try #require(try ELFImage(path: Executables.path(tool)), "\(tool) is not a 64-bit ELF file")
        #expect(image.interpreter != nil, "\(tool) asks for no program loader: a sanitizer's runtime could not start in it")
        #expect(image.neededLibraries > 0)
    }
    #endif
}
