import Foundation
import Testing

/// What the producer links: the core alone, never Foundation, so that it starts fast.
@Suite("Linkage")
struct LinkageTests {
    @Test("share-append holds no Foundation symbol, though the library an app imports re-exports Foundation-based modules")
    func shareAppendWithoutFoundation() throws {
        let binary = try Data(contentsOf: URL(fileURLWithPath: Executables.path("share-append")))
        // Swift's mangled names spell a module as its length and name.
        for module in ["10Foundation", "20FoundationEssentials", "17ShareQueueCodable"] {
            #expect(binary.range(of: Data(module.utf8)) == nil, "share-append links \(module.dropFirst(2))")
        }
        // The check can see a module: the stress tool links both.
        let stress = try Data(contentsOf: URL(fileURLWithPath: Executables.path("share-stress")))
        #expect(stress.range(of: Data("17ShareQueueCodable".utf8)) != nil)
    }
}
