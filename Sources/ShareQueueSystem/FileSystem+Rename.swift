#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif
#if os(Linux)
import CLinuxSystem
#endif

/// Renames `name` to `newName` in the directory `directory` unless `newName`
/// exists: nil when it did, the error otherwise (EEXIST for an existing name;
/// EINVAL, ENOSYS or ENOTSUP where the system cannot rename that way).
/// The corresponding C functions are `renameat2` with `RENAME_NOREPLACE`
/// (Linux, made as a system call, so that any C library has it) and
/// `renameatx_np` with `RENAME_EXCL` (Darwin).
func renameExclusively(_ directory: Int32, _ name: String, _ newName: String) -> SystemError? {
    #if canImport(Darwin)
    if !InjectedFault.fails("renameatx_np", descriptor: directory, name: name),
       renameatx_np(directory, name, directory, newName, UInt32(RENAME_EXCL)) == 0 { return nil }
    return SystemError.last("renameatx_np")
    #elseif os(Linux)
    if !InjectedFault.fails("renameat2", descriptor: directory, name: name),
       sharequeue_renameat2(directory, name, directory, newName, SHAREQUEUE_RENAME_NOREPLACE) == 0 { return nil }
    return SystemError.last("renameat2")
    #else
    return SystemError(call: "renameat2", errno: ENOSYS)
    #endif
}

