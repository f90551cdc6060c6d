import ShareQueueSystem

/// The SHA-256 of files one drain has read whole, by the file's identity, so that a file
/// is read once however many records name it: a producer may name one copy from many
/// records at the cost of a few hundred bytes each, and a redelivery finds the host's copy
/// again. The identity holds the file's change time, which every write moves and no one
/// can set, so a file changed since it was read is read again.
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

    /// The digest of the file `status` describes, if it was read whole as it is now.
    func digest(of status: FileStatus) -> String? { digests[Identity(status)] }

    /// Records the digest of `file`, read whole since `status` was taken, unless it changed meanwhile.
    func record(_ digest: String, of file: FileDescriptor, before status: FileStatus) {
        guard let after = try? file.status(), Identity(after) == Identity(status) else { return }
        digests[Identity(after)] = digest
    }

    /// Records the digest of a file this drain wrote and checked: a delivered copy.
    func record(_ digest: String, of status: FileStatus) { digests[Identity(status)] = digest }
}
