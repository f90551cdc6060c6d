#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

/// Opening a directory by path without letting anyone else's symlink choose where it leads.
extension FileDescriptor {
    /// The most symlinks followed while opening one path, as Linux's own limit.
    private static let maximumLinksFollowed = 40

    /// Opens the directory at `path` one component at a time, from the root or
    /// the working directory, with `openat`.
    ///
    /// The last component is never followed if it is a symlink: the directory
    /// opened is the one at the path, not one a link there points to. A symlink
    /// above it is followed only if root or this process's user owns it, so
    /// that a user who can write a parent directory cannot send a tool run by
    /// another user (root above all) into a directory of their choosing. With
    /// `creating`, missing directories are made with `permissions`.
    /// - Throws: `SystemError.symlinkRefused` for a symlink as the last
    ///   component, `SystemError.untrustedSymlink` for one above it that another
    ///   user owns, and the failed call's error otherwise.
    /// The corresponding C functions are `openat`, `mkdirat`, `fstatat` and `readlinkat`.
    package static func openDirectory(atPath path: String, creating: Bool, permissions: UInt16 = 0o700) throws(SystemError) -> FileDescriptor {
        var current = try open(path.hasPrefix("/") ? "/" : ".", .directory)
        // Still to open, the next one last; a followed link's target is pushed in its place.
        var remaining = Self.components(of: path).reversed() as [String]
        var linksFollowed = 0
        do throws(SystemError) {
            while let name = remaining.popLast() {
                let next: FileDescriptor
                do throws(SystemError) {
                    next = try current.openComponent(name, creating: creating, permissions: permissions)
                } catch where error.errno == ELOOP || error.errno == ENOTDIR {
                    guard let link = try current.linkStatus(of: name) else { throw error }
                    linksFollowed += 1
                    guard linksFollowed <= maximumLinksFollowed else { throw SystemError(call: "openat", errno: ELOOP) }
                    guard link.isSymbolicLink else {
                        // A directory again: the name was swapped between the two looks. Look again.
                        if link.isDirectory { remaining.append(name); continue }
                        throw error
                    }
                    guard !remaining.isEmpty else { throw SystemError.symlinkRefused }
                    guard link.owner == 0 || link.owner == Host.effectiveUserID else { throw SystemError.untrustedSymlink }
                    let target = try current.linkTarget(name, expecting: link)
                    if target.hasPrefix("/") {
                        current.close()
                        current = try open("/", .directory)
                    }
                    remaining += Self.components(of: target).reversed()
                    continue
                }
                current.close()
                current = next
            }
        } catch {
            current.close()
            throw error
        }
        return current
    }

    /// A path's components, without empty ones and ".".
    private static func components(of path: String) -> [String] {
        path.split(separator: "/").map(String.init).filter { $0 != "." }
    }

    /// Opens the directory `name` in this one without following a symlink, making it first if `creating` says so.
    private func openComponent(_ name: String, creating: Bool, permissions: UInt16) throws(SystemError) -> FileDescriptor {
        do throws(SystemError) {
            return try open(name, .ownDirectory)
        } catch where creating && error.isNotFound {
            // Its entry made durable before anything goes in, or a power cut could take the queue and all it acknowledged.
            if try makeDirectory(name, permissions: permissions) { try synchronizeDirectory(.directoryCreated) }
            return try open(name, .ownDirectory)
        }
    }

    /// What the symlink `name` in this directory points to, checked to be the
    /// link `expected` describes, so that a link swapped in between is not read instead.
    /// The corresponding C function is `readlinkat`.
    private func linkTarget(_ name: String, expecting expected: FileStatus) throws(SystemError) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlinkat(rawValue, name, &buffer, buffer.count - 1)
        guard count >= 0 else { throw SystemError.last("readlinkat") }
        guard let again = try linkStatus(of: name), again.isSameFile(as: expected), again.owner == expected.owner else {
            throw SystemError(call: "readlinkat", errno: EAGAIN)
        }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
