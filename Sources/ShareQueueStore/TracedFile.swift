import CSQLite

/// A file SQLite opened through ``TracedVFS`` whose changes the trace records:
/// the store's database, its rollback journal, its write-ahead log or a super-journal.
final class TracedFile {
    /// The absolute path SQLite opened it at.
    let path: String
    /// Its inode number, which names it in the trace beside its path.
    let inode: UInt64
    /// Whether its first sync is followed by a sync of its directory, as SQLite's unix VFS does for a new journal.
    var owesDirectorySync: Bool

    init(path: String, inode: UInt64, owesDirectorySync: Bool) {
        self.path = path
        self.inode = inode
        self.owesDirectorySync = owesDirectorySync
    }

    /// The kinds of file a crash leaves for SQLite to recover from. Temporary files
    /// are gone after a crash, and the -shm is memory SQLite rebuilds from the log:
    /// neither is part of a crash state.
    static let kinds = SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_WAL | SQLITE_OPEN_SUPER_JOURNAL

    /// Whether SQLite's unix VFS syncs the directory after the first sync of a file opened with `flags`.
    ///
    /// It mirrors `unixOpen` in SQLite's os_unix.c, which sets `UNIXFILE_DIRSYNC` when
    /// `isNewJrnl`: opened with `SQLITE_OPEN_CREATE` as a main journal, a WAL or a
    /// super-journal, whether or not the file existed; `unixSync` then syncs the
    /// directory once, after the file's first successful sync.
    static func owesDirectorySync(openedWith flags: Int32) -> Bool {
        flags & SQLITE_OPEN_CREATE != 0 && flags & (SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_WAL | SQLITE_OPEN_SUPER_JOURNAL) != 0
    }
}
