import Foundation
import ShareQueueCore

/// Which durability rules a crash state follows.
///
/// - `posix`: the conservative reading of POSIX. A write is durable once its
///   file is synced (`fdatasync`/`fsync`, which also keep its size); before
///   that it may be lost, kept, kept only before or after a 512-byte or 4 KiB boundary,
///   or leave zeros (the size without the data). A directory entry (create,
///   rename, link, unlink, mkdir) is durable once its directory is synced;
///   before that each one may or may not survive, independently of the others.
/// - `ext4-ordered`: ext4 with `data=ordered`. Metadata (entries, sizes) is
///   journaled in order, so what survives of it is a prefix, and any sync
///   commits all of it before; file data never shows zeros for an append.
/// - `apfs`: Darwin, where only `F_FULLFSYNC` flushes the drive's cache: a plain
///   `fsync` of a directory makes its entries durable only once a later
///   `F_FULLFSYNC` (of anything) flushes the drive. The tools end every sync,
///   of files and directories, with `F_FULLFSYNC` (before they did so for
///   directories, this mode found a delivered attachment's name lost).
enum CrashMode: String, CaseIterable {
    case posix
    case ext4Ordered = "ext4-ordered"
    case apfs
}

/// The files of a workload's root: what a crash state is, and what the run started from.
struct FileImage {
    var directories: Set<String> = []
    /// Each file's name and the inode it names: two names of one inode are hard links.
    var names: [String: Int] = [:]
    var contents: [Int: [UInt8]] = [:]
    /// The file system's inode number of each inode read, to resolve a trace's steps (not part of the state).
    var fileNumbers: [UInt64: Int] = [:]

    /// Reads the tree under `root` (regular files and directories).
    static func read(_ root: String) throws -> FileImage {
        var image = FileImage()
        let manager = FileManager.default
        guard let walker = manager.enumerator(atPath: root) else { return image }
        var inodes: [UInt64: Int] = [:]
        for case let name as String in walker {
            let attributes = try manager.attributesOfItem(atPath: root + "/" + name)
            if attributes[.type] as? FileAttributeType == .typeDirectory {
                image.directories.insert(name)
            } else if attributes[.type] as? FileAttributeType == .typeRegular {
                let number = (attributes[.systemFileNumber] as? NSNumber)?.uint64Value ?? UInt64(inodes.count + 1_000_000)
                let inode = inodes[number] ?? inodes.count
                inodes[number] = inode
                image.fileNumbers[number] = inode
                image.names[name] = inode
                image.contents[inode] = Array(try Data(contentsOf: URL(fileURLWithPath: root + "/" + name)))
            }
        }
        return image
    }

    /// The state as bytes, names in order, hard links as references: equal keys, equal states.
    var key: Data {
        var out = Data()
        for directory in directories.sorted() { out.append(contentsOf: Array("d \(directory)\n".utf8)) }
        var first: [Int: String] = [:]
        for name in names.keys.sorted() where isReachable(name) {
            let inode = names[name]!
            if let earlier = first[inode] {
                out.append(contentsOf: Array("l \(name) \(earlier)\n".utf8))
            } else {
                first[inode] = name
                let bytes = contents[inode] ?? []
                out.append(contentsOf: Array("f \(name) \(bytes.count)\n".utf8))
                out.append(contentsOf: bytes)
            }
        }
        return out
    }

    /// What differs between this image and `other`, a few lines at most: the names whose
    /// content, or whose being there, differ (a hard link's other name counts as its own file).
    func differences(from other: FileImage, ignoring ignored: (String) -> Bool) -> [String] {
        var out: [String] = []
        for directory in directories.symmetricDifference(other.directories).sorted() where !ignored(directory) {
            out.append("the folder \(directory) is \(directories.contains(directory) ? "in" : "not in") the files")
        }
        for name in Set(names.keys).union(other.names.keys).sorted() where !ignored(name) {
            let mine = names[name].map { contents[$0] ?? [] }
            let theirs = other.names[name].map { other.contents[$0] ?? [] }
            if mine == theirs { continue }
            if let mine, let theirs, mine.count == theirs.count {
                out.append("\(name): the files and the trace differ in its \(mine.count) bytes")
            } else {
                out.append("\(name): the files hold \(mine.map { "\($0.count) bytes" } ?? "nothing"), the trace \(theirs.map { "\($0.count) bytes" } ?? "nothing")")
            }
        }
        return out
    }

    /// Moves the folder `from`, with every folder and name under it, to `to`.
    static func moveTree(from: String, to: String, directories: inout Set<String>, names: inout [String: Int]) {
        func moved(_ path: String) -> String? {
            if path == from { return to }
            return path.hasPrefix(from + "/") ? to + path.dropFirst(from.count) : nil
        }
        directories = Set(directories.map { moved($0) ?? $0 })
        var renamed: [String: Int] = [:]
        for (name, inode) in names { renamed[moved(name) ?? name] = inode }
        names = renamed
    }

    /// Whether every directory above `name` exists in this state.
    func isReachable(_ name: String) -> Bool {
        var parent = CrashOperation.parent(name)
        while !parent.isEmpty {
            if !directories.contains(parent) { return false }
            parent = CrashOperation.parent(parent)
        }
        return true
    }

    /// Writes the state into the empty directory `root`: folders 0700 and files 0600, or, for a
    /// group-shared queue, the modes the tools give them before they have their names: folders 2770,
    /// files 0660, those only drains write 0640 and letters that wait 0600 (`QueueLayout.access(of:)`).
    /// The mode the tools give the file `name` (a path under the root) in a group-shared queue: what its
    /// name says in the queue directory, 0660 in `attachments` and `keys`.
    static func sharedPermissions(of name: String) -> Int {
        let parent = CrashOperation.parent(name)
        let last = parent.isEmpty ? name : String(name.dropFirst(parent.count + 1))
        guard !QueueLayout.folders.contains(where: { parent == $0 || parent.hasSuffix("/" + $0) }) else { return 0o660 }
        switch QueueLayout.access(of: last) {
        case .shared: return 0o660
        case .readByGroup: return 0o640
        case .ownerOnly: return 0o600
        }
    }

    func materialize(into root: String, groupShared: Bool = false) throws {
        let manager = FileManager.default
        try manager.createDirectory(atPath: root, withIntermediateDirectories: true)
        for directory in directories.sorted(by: { $0.count < $1.count }) where isReachable(directory) {
            try manager.createDirectory(atPath: root + "/" + directory, withIntermediateDirectories: false,
                                        attributes: [.posixPermissions: groupShared ? 0o2770 : 0o700])
        }
        var first: [Int: String] = [:]
        for name in names.keys.sorted() where isReachable(name) {
            let inode = names[name]!
            let path = root + "/" + name
            if let earlier = first[inode] {
                try manager.linkItem(atPath: root + "/" + earlier, toPath: path)
            } else {
                first[inode] = name
                guard manager.createFile(atPath: path, contents: Data(contents[inode] ?? []), attributes: [.posixPermissions: groupShared ? Self.sharedPermissions(of: name) : 0o600]) else {
                    throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
                }
            }
        }
    }
}
