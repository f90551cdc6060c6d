/// Which process holds a file's lock, where the system tells.
extension FileDescriptor {
    /// The process that holds an exclusive `flock` on this descriptor's file, if the system can tell.
    ///
    /// On Linux, `/proc/locks` lists every lock with its holder, device and inode:
    /// `1: FLOCK  ADVISORY  WRITE 4242 fe:00:16220227 0 EOF` (a waiter's line has `->`
    /// after the number). Elsewhere, and when the file cannot be read or names no
    /// holder of this file, the answer is nil.
    /// The corresponding C functions are `fstat`, `open` and `read`.
    package func lockHolder() -> Int32? {
        #if os(Linux)
        guard let status = try? status(), let table = Self.readLockTable() else { return nil }
        // The kernel's own spelling of the device: major and minor in hex (glibc's `major` and `minor`).
        let major = ((status.device >> 8) & 0xfff) | ((status.device >> 32) & ~0xfff)
        let minor = (status.device & 0xff) | ((status.device >> 12) & ~0xff)
        let file = Self.hex(major) + ":" + Self.hex(minor) + ":" + String(status.inode)
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK", fields[3] == "WRITE", fields[5] == file,
                  let holder = Int32(fields[4]), holder > 0 else { continue }
            return holder
        }
        return nil
        #else
        return nil
        #endif
    }

    /// The processes that hold a shared `flock` on this descriptor's file, where the system tells: each
    /// with its user where `/proc` shows it, and a process id of 0 for one the system does not name
    /// (in another PID namespace). Empty where there is none, or the system cannot tell.
    /// The corresponding C functions are `fstat`, `open` and `read`.
    package func sharedLockHolders() -> [(process: Int32, user: UInt32?)] {
        #if os(Linux)
        guard let status = try? status(), let table = Self.readLockTable() else { return [] }
        let major = ((status.device >> 8) & 0xfff) | ((status.device >> 32) & ~0xfff)
        let minor = (status.device & 0xff) | ((status.device >> 12) & ~0xff)
        let file = Self.hex(major) + ":" + Self.hex(minor) + ":" + String(status.inode)
        var holders: [(process: Int32, user: UInt32?)] = []
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK", fields[3] == "READ", fields[5] == file,
                  let holder = Int32(fields[4]), holder >= 0 else { continue }
            let user = holder > 0 ? Self.processOwner(holder) : nil
            holders.append((holder, user))
        }
        return holders
        #else
        return []
        #endif
    }

    /// The user that runs `process`, where `/proc` shows it; nil elsewhere, or for a process it does not list.
    /// The corresponding C functions are `open` and `fstat`.
    package static func processOwner(_ process: Int32) -> UInt32? {
        #if os(Linux)
        guard process > 0, let directory = try? FileDescriptor.open("/proc/\(process)", .directory) else { return nil }
        defer { directory.close() }
        return try? directory.status().owner
        #else
        return nil
        #endif
    }

    /// At least two hex digits, as the kernel prints a device number.
    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return digits.count < 2 ? "0" + digits : digits
    }

    /// `/proc/locks`, up to 4 MiB: a machine with more locks than that is not worth reading whole for a message.
    private static func readLockTable() -> Substring? {
        guard let file = try? FileDescriptor.open("/proc/locks", .readOnly) else { return nil }
        defer { file.close() }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while bytes.count < 4 << 20 {
            guard let n = try? file.read(into: &chunk, from: 0), n > 0 else { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)[...]
    }
}
