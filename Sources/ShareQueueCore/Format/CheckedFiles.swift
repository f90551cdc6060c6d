import ShareQueueSystem

/// The SHA-256 of files one drain has read whole, by the file's identity, so that a file
/// is read once however many records name it: a producer may name one copy from many
/// records at the cost of a few hundred bytes each, and a redelivery finds the host's copy
/// again. The identity holds the file's change time, which every write moves and no one
/// can set, so a file changed since it was read is read again. Likewise the folders moved
/// aside that a drain looks in for missing copies, listed once while the directory stays as it was.
final class CheckedFiles {
    private struct Identity: Hashable {
        let device: UInt64
        let inode: UInt64
        let size: Int64
        let changed: Int64

        init(_ status: FileStatus) {
            device = status.device
            inode = status.inode
            size = status.size
            changed = status.changeNanoseconds
        }
    }

    private var digests: [Identity: String] = [:]

    /// The folders moved aside that the drain looks in, as last listed, with the queue directory's change time
    /// then and the monotonic second of the listing.
    private var movedAside: (folders: [String], directoryChanged: Int64?, listedAt: Double)?

    /// The digest of the file `status` describes, if it was read whole as it is now.
    func digest(of status: FileStatus) -> String? { digests[Identity(status)] }

    /// Records the digest of `file`, read whole since `status` was taken, unless it changed meanwhile.
    func record(_ digest: String, of file: FileDescriptor, before status: FileStatus) {
        guard let after = try? file.status(), Identity(after) == Identity(status) else { return }
        digests[Identity(after)] = digest
    }

    /// Records the digest of a file this drain wrote and checked: a delivered copy.
    func record(_ digest: String, of status: FileStatus) { digests[Identity(status)] = digest }

    /// The folders moved aside from `attachments` that the drain looks in, listed by `list` again only
    /// once the queue directory (`directory`, its status taken before) has changed since the last listing
    /// and that listing is a second old: any member can fill the directory with names, which a listing
    /// for each record whose copy is missing would read again and again.
    func movedAsideFolders(directory: FileStatus, list: () throws(ShareQueueError) -> [String]) throws(ShareQueueError) -> [String] {
        let now = Host.monotonicSeconds()
        if let known = movedAside, known.directoryChanged == directory.changeNanoseconds || now - known.listedAt < 1 {
            return known.folders
        }
        let folders = try list()
        // A change in the clock tick of the status leaves the change time as it was: a listing made
        // within a tick of a change is not known to hold it, and is made again a second later.
        let settled = Host.millisecondsSince1970() * 1_000_000 - directory.changeNanoseconds > 50_000_000
        movedAside = (folders, settled ? directory.changeNanoseconds : nil, now)
        return folders
    }
}
