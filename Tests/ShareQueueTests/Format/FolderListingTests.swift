import Foundation
import Testing
import ShareQueueSystem

/// Listing a folder, as the drain lists a queue: every name, byte for byte.
@Suite("Folder listing")
struct FolderListingTests {
    /// The C library reads entries into a buffer of about 32 KiB and hands them out
    /// one by one, each only as long as its name needs; names of every length put
    /// entries of every size at the end of a buffer. (Under the address sanitizer,
    /// a listing that copied a whole `dirent` read past that buffer here.)
    @Test("A listing holds every name, of every length from 1 to 255 bytes, across many reads of the C library's buffer")
    func everyNameOfEveryLength() throws {
        let scratch = TemporaryDirectory()
        var made: Set<String> = []
        for length in 1...255 {
            for letter in ["a", "b", "c", "d"] {
                let name = String(repeating: letter, count: length)
                #expect(FileManager.default.createFile(atPath: scratch.file(name), contents: nil))
                made.insert(name)
            }
        }
        let folder = try FileDescriptor.openDirectory(atPath: scratch.path, creating: false)
        defer { folder.close() }
        let listed = try folder.entries()
        #expect(listed.count == made.count)
        #expect(Set(listed) == made)
    }
}
