import Foundation

/// The crash states one traced run allows under a ``CrashMode``: every prefix of
/// its operations (the cut), and on each, every fate of what was not yet durable.
struct CrashStates {
    /// What became of an operation that was not durable at the cut.
    enum Fate: Equatable {
        case keep
        case drop
        /// The size grew but the data did not reach the disk: zeros.
        case zeros
        /// Only the bytes before this file offset (a 512-byte or 4 KiB boundary) reached the disk.
        case prefix(Int)
        /// Only the bytes from this boundary on reached the disk; before it, zeros (blocks written out of order).
        case suffix(Int)
    }

    /// A choice a crash state makes: one operation's fate, or how many of the
    /// metadata operations not yet committed survive (a journal keeps a prefix).
    enum Item {
        case single(Int, [Fate])
        case metadataPrefix([Int])

        var optionCount: Int {
            switch self {
            case .single(_, let fates): fates.count
            case .metadataPrefix(let operations): operations.count + 1
            }
        }
    }

    /// What a cut leaves open: which operations are durable, and the choices.
    struct Cut {
        let position: Int
        let durable: [Bool]
        let items: [Item]

        /// How many states the cut allows (saturating).
        var stateCount: Int {
            items.reduce(1) { total, item in
                let (product, overflow) = total.multipliedReportingOverflow(by: item.optionCount)
                return overflow ? Int.max : product
            }
        }
    }

    /// Whether the tools' directory syncs on Darwin end with F_FULLFSYNC (they do); false models a plain fsync.
    static let darwinDirectorySyncIsFull = true

    let initial: FileImage
    let operations: [CrashOperation]
    let mode: CrashMode

    init(initial: FileImage, steps: [TraceStep], mode: CrashMode) {
        self.initial = initial
        operations = CrashOperation.resolve(steps, initial: initial)
        self.mode = mode
    }

    /// The cut after the first `position` operations.
    func cut(_ position: Int) -> Cut {
        var durable = [Bool](repeating: false, count: position)
        var syncedInodes = Set<Int>()
        var syncedDirectories = Set<String>()
        var laterFullSync = false
        var laterAnySync = false
        for index in stride(from: position - 1, through: 0, by: -1) {
            switch operations[index] {
            case .fileSync(let inode):
                syncedInodes.insert(inode)
                laterFullSync = true
                laterAnySync = true
            case .directorySync(let directory):
                // On APFS a plain fsync counts once a later F_FULLFSYNC flushes the drive; the
                // tools follow a directory's fsync with F_FULLFSYNC of it on Darwin.
                if mode != .apfs || laterFullSync || Self.darwinDirectorySyncIsFull { syncedDirectories.insert(directory) }
                if mode == .apfs && Self.darwinDirectorySyncIsFull { laterFullSync = true }
                laterAnySync = true
            case .data(let inode, let change):
                if mode == .ext4Ordered, case .truncate = change { durable[index] = laterAnySync } else { durable[index] = syncedInodes.contains(inode) }
            case .entry(_, let parents):
                durable[index] = mode == .ext4Ordered ? laterAnySync : parents.allSatisfy(syncedDirectories.contains)
            case .mark:
                durable[index] = true
            }
        }
        var items: [Item] = []
        var metadata: [Int] = []
        for index in 0..<position where !durable[index] {
            let operation = operations[index]
            if mode == .ext4Ordered && operation.isMetadata {
                metadata.append(index)
                continue
            }
            switch operation {
            case .entry, .data(_, .truncate): items.append(.single(index, [.keep, .drop]))
            case .data(_, .write(let offset, let bytes)): items.append(.single(index, fates(offset: offset, count: bytes.count)))
            default: break
            }
        }
        if !metadata.isEmpty { items.append(.metadataPrefix(metadata)) }
        return Cut(position: position, durable: durable, items: items)
    }

    /// The fates of a write not yet durable: lost, kept, zeros (not on ext4), or kept only before (or, not on ext4, only after) a boundary inside it.
    private func fates(offset: Int, count: Int) -> [Fate] {
        var fates: [Fate] = mode == .ext4Ordered ? [.keep, .drop] : [.keep, .drop, .zeros]
        let block = mode == .ext4Ordered ? 4096 : 512
        var boundaries: [Int] = []
        var boundary = (offset / block + 1) * block
        while boundary < offset + count {
            boundaries.append(boundary)
            boundary += block
        }
        // At most four, spread out, the 4 KiB ones first.
        let chosen = boundaries.count <= 4 ? boundaries
            : Array(Set(boundaries.filter { $0 % 4096 == 0 }.prefix(2) + [boundaries.first!, boundaries.last!])).sorted()
        fates += chosen.map { .prefix($0) }
        if mode != .ext4Ordered { fates += chosen.map { .suffix($0) } }
        return fates
    }

    /// The state a cut leaves with `choices` (one per item, each below its option count).
    func state(_ cut: Cut, choices: [Int]) -> FileImage {
        var fate: [Int: Fate] = [:]
        for (item, choice) in zip(cut.items, choices) {
            switch item {
            case .single(let index, let fates): fate[index] = fates[choice]
            case .metadataPrefix(let indices): for (n, index) in indices.enumerated() { fate[index] = n < choice ? .keep : .drop }
            }
        }
        var image = initial
        for index in 0..<cut.position {
            let chosen = cut.durable[index] ? .keep : fate[index] ?? .keep
            if chosen == .drop { continue }
            switch operations[index] {
            case .entry(let entry, _): Self.apply(entry, to: &image)
            case .data(let inode, .truncate(let size)):
                var bytes = image.contents[inode] ?? []
                if bytes.count > size { bytes.removeLast(bytes.count - size) } else { bytes += [UInt8](repeating: 0, count: size - bytes.count) }
                image.contents[inode] = bytes
            case .data(let inode, .write(let offset, let bytes)):
                var written = bytes
                if chosen == .zeros { written = [UInt8](repeating: 0, count: bytes.count) }
                if case .prefix(let end) = chosen { written = Array(bytes.prefix(end - offset)) }
                if case .suffix(let start) = chosen { written = [UInt8](repeating: 0, count: start - offset) + bytes.dropFirst(start - offset) }
                var data = image.contents[inode] ?? []
                if data.count < offset + written.count { data += [UInt8](repeating: 0, count: offset + written.count - data.count) }
                data.replaceSubrange(offset..<(offset + written.count), with: written)
                image.contents[inode] = data
            case .fileSync, .directorySync, .mark: break
            }
        }
        return image
    }

    /// The state with every operation kept: what the files hold after the run, if the trace saw every change.
    var everythingKept: FileImage {
        state(Cut(position: operations.count, durable: [Bool](repeating: true, count: operations.count), items: []), choices: [])
    }

    private static func apply(_ entry: CrashOperation.Entry, to image: inout FileImage) {
        switch entry {
        case .create(let path, let inode):
            image.names[path] = inode
            if image.contents[inode] == nil { image.contents[inode] = [] }
        case .mkdir(let path): image.directories.insert(path)
        case .rename(let from, let to):
            if image.directories.contains(from) {
                FileImage.moveTree(from: from, to: to, directories: &image.directories, names: &image.names)
                return
            }
            guard let inode = image.names[from] else { return }
            image.names[to] = inode
            image.names[from] = nil
        case .link(let from, let to):
            if let inode = image.names[from] { image.names[to] = inode }
        case .unlink(let path):
            // An empty folder's removal is traced as an unlink too.
            image.names[path] = nil
            image.directories.remove(path)
        }
    }

    /// The ids producers printed, and sinks took, before the first `position` operations ended.
    func marks(before position: Int) -> (printed: [String], delivered: [String]) {
        var printed: [String] = []
        var delivered: [String] = []
        for operation in operations.prefix(position) {
            guard case .mark(let words) = operation, let kind = words.first else { continue }
            if kind == "printed" { printed += words.dropFirst() }
            if kind == "delivered" { delivered += words.dropFirst() }
        }
        return (printed, delivered)
    }
}
