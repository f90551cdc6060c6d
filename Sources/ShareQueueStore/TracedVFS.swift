import CSQLite
import ShareQueueSystem

/// A SQLite VFS over the default one that records in ``SystemTrace`` every change
/// SQLite makes to the store's files (creations, writes, truncations, syncs,
/// removals, and the directory syncs the unix VFS adds), so that a power-cut
/// explorer rebuilds the states between SQLite's own writes and syncs.
///
/// Registered only when `SHARE_QUEUE_TRACE` is set: otherwise ``name`` is nil and
/// the store opens with the default VFS, paying nothing. Reads, locks and the
/// shared-memory (-shm) file only pass through. Laid out as SQLite's
/// ext/misc/vfstrace.c lays out its files: each file is SQLite's handle, a
/// pointer to its ``TracedFile`` (nil for a file not traced), then the default
/// VFS's own file, so the VFS's `szOsFile` is the default's plus ``headerSize``.
enum TracedVFS {
    /// The name the VFS is registered under, for `sqlite3_open_v2`; nil when nothing is traced.
    static let name: String? = register()

    /// Bytes before the default VFS's file in each of this VFS's files.
    static let headerSize = MemoryLayout<sqlite3_file>.stride + MemoryLayout<UnsafeMutableRawPointer?>.stride

    /// Where a file keeps its ``TracedFile``, just after SQLite's handle.
    private static let tracedOffset = MemoryLayout<sqlite3_file>.stride

    /// The default VFS's file inside `file`.
    static func real(_ file: UnsafeMutablePointer<sqlite3_file>) -> UnsafeMutablePointer<sqlite3_file> {
        (UnsafeMutableRawPointer(file) + headerSize).assumingMemoryBound(to: sqlite3_file.self)
    }

    /// The ``TracedFile`` of `file`, nil for a file not traced.
    static func traced(_ file: UnsafeMutablePointer<sqlite3_file>) -> TracedFile? {
        UnsafeMutableRawPointer(file).load(fromByteOffset: tracedOffset, as: UnsafeMutableRawPointer?.self)
            .map { Unmanaged<TracedFile>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Keeps `traced` in `file` (retained until ``release(_:)``).
    private static func keep(_ traced: TracedFile?, in file: UnsafeMutablePointer<sqlite3_file>) {
        let pointer = traced.map { Unmanaged.passRetained($0).toOpaque() }
        UnsafeMutableRawPointer(file).storeBytes(of: pointer, toByteOffset: tracedOffset, as: UnsafeMutableRawPointer?.self)
    }

    /// Lets go of the ``TracedFile`` of `file`, which SQLite is closing.
    static func release(_ file: UnsafeMutablePointer<sqlite3_file>) {
        if let pointer = UnsafeMutableRawPointer(file).load(fromByteOffset: tracedOffset, as: UnsafeMutableRawPointer?.self) {
            Unmanaged<TracedFile>.fromOpaque(pointer).release()
        }
        keep(nil, in: file)
    }

    /// The default VFS this one passes calls to (its `pAppData`).
    private static func defaultVFS(of vfs: UnsafeMutablePointer<sqlite3_vfs>?) -> UnsafeMutablePointer<sqlite3_vfs> {
        vfs!.pointee.pAppData.assumingMemoryBound(to: sqlite3_vfs.self)
    }

    /// Registers the VFS (not as the default) if the trace is on; it lives as long as the process.
    private static func register() -> String? {
        guard SystemTrace.current != nil, Mutant.active != .storeAroundLayer, let base = sqlite3_vfs_find(nil) else { return nil }
        let name = "sharequeue-trace"
        let cName = UnsafeMutablePointer<CChar>.allocate(capacity: name.utf8.count + 1)
        cName.initialize(from: name.utf8CString.map { $0 }, count: name.utf8.count + 1)
        let vfs = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)
        vfs.initialize(to: sqlite3_vfs())
        // Version 2: the system-call overrides of version 3 are for SQLite's own tests.
        vfs.pointee.iVersion = min(base.pointee.iVersion, 2)
        vfs.pointee.szOsFile = Int32(headerSize) + base.pointee.szOsFile
        vfs.pointee.mxPathname = base.pointee.mxPathname
        vfs.pointee.zName = UnsafePointer(cName)
        vfs.pointee.pAppData = UnsafeMutableRawPointer(base)
        vfs.pointee.xOpen = { vfs, name, file, flags, outFlags in TracedVFS.open(vfs, name, file!, flags, outFlags) }
        vfs.pointee.xDelete = { vfs, name, syncDirectory in
            let base = TracedVFS.defaultVFS(of: vfs)
            let result = base.pointee.xDelete!(base, name, syncDirectory)
            if result == SQLITE_OK, let name, let trace = SystemTrace.current {
                let path = FileSystem.absolute(String(cString: name))
                trace.removed(fileAt: path)
                // unixDelete in os_unix.c syncs the directory after the unlink when bit 1 of syncDir is set.
                if syncDirectory & 1 != 0 { trace.synchronized(directoryOf: path) }
            }
            return result
        }
        vfs.pointee.xAccess = { vfs, name, flags, out in let base = TracedVFS.defaultVFS(of: vfs); return base.pointee.xAccess!(base, name, flags, out) }
        vfs.pointee.xFullPathname = { vfs, name, count, out in let base = TracedVFS.defaultVFS(of: vfs); return base.pointee.xFullPathname!(base, name, count, out) }
        vfs.pointee.xDlOpen = { vfs, name in let base = TracedVFS.defaultVFS(of: vfs); return base.pointee.xDlOpen?(base, name) }
        vfs.pointee.xDlError = { vfs, count, message in let base = TracedVFS.defaultVFS(of: vfs); base.pointee.xDlError?(base, count, message) }
        vfs.pointee.xDlSym = { vfs, library, symbol in let base = TracedVFS.defaultVFS(of: vfs); return base.pointee.xDlSym?(base, library, symbol) }
        vfs.pointee.xDlClose = { vfs, library in let base = TracedVFS.defaultVFS(of: vfs); base.pointee.xDlClose?(base, library) }
        vfs.pointee.xRandomness = { vfs, count, out in let base = TracedVFS.defaultVFS(of: vfs); return base.pointee.xRandomness!(base, count, out) }
        vfs.pointee.xSleep = { vfs, microseconds in let base = TracedVFS.defaultVFS(of: vfs); return base.pointee.xSleep!(base, microseconds) }
        vfs.pointee.xCurrentTime = { vfs, now in let base = TracedVFS.defaultVFS(of: vfs); return base.pointee.xCurrentTime!(base, now) }
        vfs.pointee.xGetLastError = { vfs, count, message in let base = TracedVFS.defaultVFS(of: vfs); return base.pointee.xGetLastError?(base, count, message) ?? 0 }
        if base.pointee.iVersion >= 2 && base.pointee.xCurrentTimeInt64 != nil {
            vfs.pointee.xCurrentTimeInt64 = { vfs, now in let base = TracedVFS.defaultVFS(of: vfs); return base.pointee.xCurrentTimeInt64!(base, now) }
        }
        guard sqlite3_vfs_register(vfs, 0) == SQLITE_OK else { return nil }
        return name
    }

    /// Opens `file` with the default VFS, and follows it when it is one a crash leaves
    /// (see ``TracedFile/kinds``): its creation is recorded if it did not exist.
    private static func open(_ vfs: UnsafeMutablePointer<sqlite3_vfs>?, _ name: UnsafePointer<CChar>?, _ file: UnsafeMutablePointer<sqlite3_file>,
                             _ flags: Int32, _ outFlags: UnsafeMutablePointer<Int32>?) -> Int32 {
        let base = TracedVFS.defaultVFS(of: vfs)
        keep(nil, in: file)
        let path = name.flatMap { flags & TracedFile.kinds != 0 && flags & SQLITE_OPEN_DELETEONCLOSE == 0 ? FileSystem.absolute(String(cString: $0)) : nil }
        let existed = path.map { (try? FileSystem.status($0)) != nil } ?? true
        let result = base.pointee.xOpen!(base, name, real(file), flags, outFlags)
        // SQLite calls xClose, even after a failure, exactly when pMethods is set.
        guard real(file).pointee.pMethods != nil else {
            file.pointee.pMethods = nil
            return result
        }
        file.pointee.pMethods = UnsafePointer(methods)
        guard result == SQLITE_OK, let path, let trace = SystemTrace.current else { return result }
        if flags & SQLITE_OPEN_CREATE != 0 && !existed { trace.created(fileAt: path) }
        keep(TracedFile(path: path, inode: SystemTrace.inode(ofFileAt: path), owesDirectorySync: TracedFile.owesDirectorySync(openedWith: flags)), in: file)
        return result
    }
}
