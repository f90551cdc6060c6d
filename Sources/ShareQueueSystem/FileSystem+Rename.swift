#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

extension FileSystem {
    /// Renames `from` to `to`, or fails with EEXIST and changes nothing if `to`
    /// exists. Where the file system cannot rename that way, it links and unlinks
    /// instead (`renameByLinking`), which never replaces either.
    /// The corresponding C functions are `renameat2` with `RENAME_NOREPLACE`
    /// (Linux) and `renamex_np` with `RENAME_EXCL` (Darwin).
    package static func renameWithoutReplacing(_ from: String, to: String) throws(SystemError) {
        #if canImport(Darwin)
        if renamex_np(from, to, UInt32(RENAME_EXCL)) == 0 { return }
        let error = SystemError.last("renamex_np")
        guard error.errno == ENOTSUP || error.errno == EINVAL else { throw error }
        #elseif os(Linux)
        if let renameat2 = linuxRenameat2 {
            if renameat2(AT_FDCWD, from, AT_FDCWD, to, linuxRenameNoReplace) == 0 { return }
            let error = SystemError.last("renameat2")
            // EINVAL: this file system does not take the flag; ENOSYS: a kernel older than 3.15.
            guard error.errno == EINVAL || error.errno == ENOSYS else { throw error }
        }
        #endif
        try renameByLinking(from, to: to)
    }

    /// Gives `from` the name `to`, failing with EEXIST if `to` exists, then
    /// removes the name `from`. A crash between the two leaves both names, never neither.
    /// The corresponding C functions are `link` and `unlink`.
    package static func renameByLinking(_ from: String, to: String) throws(SystemError) {
        try link(from, to: to)
        do { try removeFile(from) } catch {
            try? removeFile(to)
            throw error
        }
    }
}

#if os(Linux)
/// `RENAME_NOREPLACE` from <stdio.h> (and <linux/fs.h>).
private let linuxRenameNoReplace: UInt32 = 1

/// `renameat2`, which the C library's Swift module does not declare (it is a
/// GNU extension): looked up once, nil where the C library lacks it.
private let linuxRenameat2: (@convention(c) (Int32, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UInt32) -> Int32)? = {
    guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "renameat2") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (Int32, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UInt32) -> Int32).self)
}()
#endif
