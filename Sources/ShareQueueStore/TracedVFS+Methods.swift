import CSQLite
import ShareQueueSystem

extension TracedVFS {
    /// The methods of every file ``TracedVFS`` opens: each passes the call to the
    /// default VFS's file inside it, and the changes (write, truncate, sync) are
    /// recorded after they succeed. Made once and never changed, so sharing it
    /// between threads is safe, though Swift cannot see that through the pointer.
    nonisolated(unsafe) static let methods: UnsafeMutablePointer<sqlite3_io_methods> = {
        let methods = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)
        methods.initialize(to: sqlite3_io_methods())
        methods.pointee.iVersion = 3
        methods.pointee.xClose = { file in
            let real = TracedVFS.real(file!)
            let result = real.pointee.pMethods.pointee.xClose!(real)
            TracedVFS.release(file!)
            return result
        }
        methods.pointee.xRead = { file, buffer, count, offset in
            let real = TracedVFS.real(file!)
            return real.pointee.pMethods.pointee.xRead!(real, buffer, count, offset)
        }
        methods.pointee.xWrite = { file, buffer, count, offset in
            let real = TracedVFS.real(file!)
            let result = real.pointee.pMethods.pointee.xWrite!(real, buffer, count, offset)
            if result == SQLITE_OK, let traced = TracedVFS.traced(file!), let trace = SystemTrace.current {
                trace.wrote(fileAt: traced.path, inode: traced.inode, UnsafeRawBufferPointer(start: buffer, count: Int(count)), at: offset)
            }
            return result
        }
        methods.pointee.xTruncate = { file, size in
            let real = TracedVFS.real(file!)
            let result = real.pointee.pMethods.pointee.xTruncate!(real, size)
            if result == SQLITE_OK, let traced = TracedVFS.traced(file!), let trace = SystemTrace.current {
                trace.truncated(fileAt: traced.path, inode: traced.inode, to: size)
            }
            return result
        }
        methods.pointee.xSync = { file, flags in
            let real = TracedVFS.real(file!)
            let result = real.pointee.pMethods.pointee.xSync!(real, flags)
            if result == SQLITE_OK, let traced = TracedVFS.traced(file!), let trace = SystemTrace.current {
                trace.synchronized(fileAt: traced.path, inode: traced.inode)
                // The default VFS has just synced the directory too, once (see TracedFile.owesDirectorySync).
                if traced.owesDirectorySync {
                    traced.owesDirectorySync = false
                    trace.synchronized(directoryOf: traced.path)
                }
            }
            return result
        }
        methods.pointee.xFileSize = { file, size in
            let real = TracedVFS.real(file!)
            return real.pointee.pMethods.pointee.xFileSize!(real, size)
        }
        methods.pointee.xLock = { file, level in
            let real = TracedVFS.real(file!)
            return real.pointee.pMethods.pointee.xLock!(real, level)
        }
        methods.pointee.xUnlock = { file, level in
            let real = TracedVFS.real(file!)
            return real.pointee.pMethods.pointee.xUnlock!(real, level)
        }
        methods.pointee.xCheckReservedLock = { file, out in
            let real = TracedVFS.real(file!)
            return real.pointee.pMethods.pointee.xCheckReservedLock!(real, out)
        }
        methods.pointee.xFileControl = { file, operation, argument in
            let real = TracedVFS.real(file!)
            return real.pointee.pMethods.pointee.xFileControl!(real, operation, argument)
        }
        methods.pointee.xSectorSize = { file in
            let real = TracedVFS.real(file!)
            return real.pointee.pMethods.pointee.xSectorSize!(real)
        }
        methods.pointee.xDeviceCharacteristics = { file in
            let real = TracedVFS.real(file!)
            return real.pointee.pMethods.pointee.xDeviceCharacteristics!(real)
        }
        // Shared memory and memory maps: the default VFS's, untraced (the -shm is rebuilt after a crash).
        methods.pointee.xShmMap = { file, page, size, extend, out in
            let real = TracedVFS.real(file!)
            guard real.pointee.pMethods.pointee.iVersion >= 2, let map = real.pointee.pMethods.pointee.xShmMap else { return SQLITE_IOERR }
            return map(real, page, size, extend, out)
        }
        methods.pointee.xShmLock = { file, offset, count, flags in
            let real = TracedVFS.real(file!)
            guard real.pointee.pMethods.pointee.iVersion >= 2, let lock = real.pointee.pMethods.pointee.xShmLock else { return SQLITE_IOERR }
            return lock(real, offset, count, flags)
        }
        methods.pointee.xShmBarrier = { file in
            let real = TracedVFS.real(file!)
            if real.pointee.pMethods.pointee.iVersion >= 2 { real.pointee.pMethods.pointee.xShmBarrier?(real) }
        }
        methods.pointee.xShmUnmap = { file, delete in
            let real = TracedVFS.real(file!)
            guard real.pointee.pMethods.pointee.iVersion >= 2 else { return SQLITE_OK }
            return real.pointee.pMethods.pointee.xShmUnmap?(real, delete) ?? SQLITE_OK
        }
        methods.pointee.xFetch = { file, offset, count, out in
            let real = TracedVFS.real(file!)
            guard real.pointee.pMethods.pointee.iVersion >= 3, let fetch = real.pointee.pMethods.pointee.xFetch else {
                out?.pointee = nil
                return SQLITE_OK
            }
            return fetch(real, offset, count, out)
        }
        methods.pointee.xUnfetch = { file, offset, pointer in
            let real = TracedVFS.real(file!)
            guard real.pointee.pMethods.pointee.iVersion >= 3, let unfetch = real.pointee.pMethods.pointee.xUnfetch else { return SQLITE_OK }
            return unfetch(real, offset, pointer)
        }
        return methods
    }()
}
