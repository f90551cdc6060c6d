import Foundation

/// A traced step resolved against the run as it happened: which inode a path
/// named at that moment, which directories an entry change touches.
enum CrashOperation {
    enum Entry {
        case create(String, inode: Int)
        case mkdir(String)
        case rename(String, to: String)
        case link(String, to: String)
        case unlink(String)
    }

    enum Change {
        case write(offset: Int, bytes: [UInt8])
        case truncate(size: Int)
    }

    /// A directory entry changed, in the directories `parents`.
    case entry(Entry, parents: [String])
    /// A file's data or size changed.
    case data(inode: Int, Change)
    case fileSync(inode: Int)
    case directorySync(String)
    case mark([String])

    /// Whether a file system journals this as metadata (for `ext4-ordered`).
    var isMetadata: Bool {
        switch self {
        case .entry, .data(_, .truncate): true
        default: false
        }
    }

    /// The directory holding `path` ("" for the root).
    static func parent(_ path: String) -> String {
        path.lastIndex(of: "/").map { String(path[..<$0]) } ?? ""
    }

    /// Resolves `steps` against `initial`, replaying the run's own namespace.
    static func resolve(_ steps: [TraceStep], initial: FileImage) -> [CrashOperation] {
        var names = initial.names
        var numbers = initial.fileNumbers
        // Through a descriptor, the inode number; else the path (a file created before the trace began).
        func inode(_ path: String, _ number: UInt64) -> Int? { numbers[number] ?? names[path] }
        var directories = initial.directories
        var nextInode = (initial.contents.keys.max() ?? -1) + 1
        var operations: [CrashOperation] = []
        for step in steps {
            switch step {
            case .create(let path, let number):
                names[path] = nextInode
                numbers[number] = nextInode
                operations.append(.entry(.create(path, inode: nextInode), parents: [Self.parent(path)]))
                nextInode += 1
            case .mkdir(let path):
                directories.insert(path)
                operations.append(.entry(.mkdir(path), parents: [Self.parent(path)]))
            case .write(let path, let number, let offset, let bytes):
                if let inode = inode(path, number) { operations.append(.data(inode: inode, .write(offset: offset, bytes: bytes))) }
            case .truncate(let path, let number, let size):
                if let inode = inode(path, number) { operations.append(.data(inode: inode, .truncate(size: size))) }
            case .sync(let path, let number):
                if directories.contains(path) || path.isEmpty {
                    operations.append(.directorySync(path))
                } else if let inode = inode(path, number) {
                    operations.append(.fileSync(inode: inode))
                }
            case .rename(let from, let to):
                if directories.contains(from) {
                    // A folder made whole under a temporary name and renamed into place: everything under it moves too.
                    FileImage.moveTree(from: from, to: to, directories: &directories, names: &names)
                } else {
                    if let inode = names[from] { names[to] = inode }
                    names[from] = nil
                }
                operations.append(.entry(.rename(from, to: to), parents: Array(Set([Self.parent(from), Self.parent(to)]))))
            case .link(let from, let to):
                names[to] = names[from]
                operations.append(.entry(.link(from, to: to), parents: [Self.parent(to)]))
            case .unlink(let path):
                names[path] = nil
                directories.remove(path)
                operations.append(.entry(.unlink(path), parents: [Self.parent(path)]))
            case .mark(let words):
                operations.append(.mark(words))
            }
        }
        return operations
    }
}
