#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

/// Who owns an open file, and who else may use it.
extension FileDescriptor {
    /// Sets the file's permission bits, set-group-ID included. The corresponding C function is `fchmod`.
    package func setPermissions(_ permissions: UInt16) throws(SystemError) {
        _ = try retryingOnInterrupt("fchmod") { fchmod(rawValue, mode_t(permissions)) }
    }

    /// Gives the file to `owner` and `group`; nil keeps one as it is. Only root
    /// can give a file away; a user can give one of theirs to a group they are in.
    /// The corresponding C function is `fchown`.
    package func setOwner(_ owner: UInt32?, group: UInt32?) throws(SystemError) {
        _ = try retryingOnInterrupt("fchown") { fchown(rawValue, owner.map { uid_t($0) } ?? uid_t.max, group.map { gid_t($0) } ?? gid_t.max) }
    }
}
