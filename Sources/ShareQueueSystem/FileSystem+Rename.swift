#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

/// Renames `name` to `newName` in the directory `directory` unless `newName`
/// exists: nil when it did, the error otherwise (EEXIST for an existing name;
/// EINVAL, ENOSYS or ENOTSUP where the system cannot rename that way).
/// The corresponding C functions are `renameat2` with `RENAME_NOREPLACE`
/// (Linux) and `renameatx_np` with `RENAME_EXCL` (Darwin).
func renameExclusively(_ directory: Int32, _ name: String, _ newName: String) -> SystemError? {
    #if canImport(Darwin)
    if renameatx_np(directory, name, directory, newName, UInt32(RENAME_EXCL)) == 0 { return nil }
    return SystemError.last("renameatx_np")
    #elseif os(Linux)
    guard let renameat2 = linuxRenameat2 else { return SystemError(call: "renameat2", errno: ENOSYS) }
    if renameat2(directory, name, directory, newName, linuxRenameNoReplace) == 0 { return nil }
    return SystemError.last("renameat2")
    #else
    return SystemError(call: "renameat2", errno: ENOSYS)
    #endif
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
