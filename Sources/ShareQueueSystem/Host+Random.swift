#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

extension Host {
    /// Cryptographically random bytes from the kernel. The corresponding C
    /// function is `arc4random_buf` on Darwin, a `read` of /dev/urandom elsewhere.
    package static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        #if canImport(Darwin)
        bytes.withUnsafeMutableBytes { arc4random_buf($0.baseAddress, $0.count) }
        #else
        var filled = 0
        if let urandom = try? FileDescriptor.openFollowingLinks("/dev/urandom") {
            while filled < count, let n = try? urandom.read(into: &bytes, from: filled), n > 0 { filled += n }
            urandom.close()
        }
        if filled < count {
            // No /dev/urandom (a bare chroot): the standard library's generator, a system call per 8 bytes.
            var generator = SystemRandomNumberGenerator()
            for index in filled..<count { bytes[index] = UInt8.random(in: 0...255, using: &generator) }
        }
        #endif
        return bytes
    }
}
