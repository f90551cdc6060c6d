import ShareQueueSystem

/// Who may use the files and folders a tool creates in a queue, read off the
/// queue directory itself, so that every producer and host agree without a setting.
///
/// A directory that only its owner can write gets files 0600 and folders 0700.
/// One its group can read or write (a group-shared queue: setgid, mode 2770)
/// passes those group bits on: files 0660 (or 0640), folders 2770, all in the
/// directory's group, whatever each process's umask or primary group. A tool
/// run as root gives what it creates to the directory's owner, so that it never
/// leaves a file the owner cannot use. No file is ever made accessible to others.
///
/// Files only drains write (the checkpoint, the refusal counts, the dead letters, the format
/// marker) get no group write bit, 0640, and letters that wait none of the group's, 0600: a member
/// could otherwise rewrite them to skip or dead-letter honest records (see `QueueLayout.access(of:)`).
struct FileSharing: Sendable {
    /// The permissions of a new file that producers of every user write.
    let filePermissions: UInt16
    /// The permissions of a new folder, set-group-ID included where the directory has it.
    let folderPermissions: UInt16
    /// The group new files and folders are given, where the directory is shared with one.
    let group: UInt32?
    /// The user new files and folders are given: the directory's owner, when root creates them.
    let owner: UInt32?
    /// The queue directory's owner, whose drains' files are the only ones a drain trusts.
    let directoryOwner: UInt32

    /// Whether users other than the directory's owner may rename and remove the files in it: any member
    /// of its group can then put one of the owner's own files at another of the queue's names.
    var groupMayRename: Bool { filePermissions & 0o020 != 0 }

    /// The rule of the directory whose status is `directory`.
    init(directory: FileStatus) {
        let groupBits = directory.permissions & 0o070
        filePermissions = 0o600 | (groupBits & 0o060)
        folderPermissions = 0o700 | groupBits | (groupBits == 0 ? 0 : directory.permissions & 0o2000)
        group = groupBits == 0 ? nil : directory.group
        owner = Host.effectiveUserID == 0 && directory.owner != 0 ? directory.owner : nil
        directoryOwner = directory.owner
    }

    /// The permissions of a new file that `access` says who may use.
    func filePermissions(_ access: QueueLayout.FileAccess) -> UInt16 {
        switch access {
        case .shared: filePermissions
        case .readByGroup: filePermissions & ~0o020
        case .ownerOnly: 0o600
        }
    }

    /// Whether a file owned by `user` may be one a drain wrote: the queue's owner's, root's, or this process's own.
    func isTrusted(owner user: UInt32) -> Bool {
        user == directoryOwner || user == 0 || user == Host.effectiveUserID
    }

    /// Gives a file or folder this process just created (or owns) the rule's
    /// owner, group and permissions. Best effort: a change the system refuses
    /// (a group the user is not in) leaves the file as the umask made it.
    ///
    /// Only a directory or a regular file with no other name is changed: another
    /// name may be outside the queue (a hard link planted in it), and root must
    /// not hand that file to the queue's owner.
    /// - Parameter permissions: those a file is given: by default ``filePermissions``.
    func adopt(_ file: FileDescriptor, permissions: UInt16? = nil) {
        guard let status = try? file.status(), status.owner == Host.effectiveUserID,
              status.isDirectory || (status.isRegularFile && status.linkCount == 1) else { return }
        // Ownership first: changing it can clear set-group-ID, which the permissions then put back.
        if (owner != nil && status.owner != owner) || (group != nil && status.group != group) {
            try? file.setOwner(owner, group: group)
        }
        let wanted = status.isDirectory ? folderPermissions : permissions ?? filePermissions
        if status.permissions != wanted { try? file.setPermissions(wanted) }
    }
}
