#if canImport(Glibc)
import Glibc
#endif

extension Host {
    /// Asks the C library to keep memory a program frees for its next
    /// allocations instead of handing it back to the kernel at once. A drain
    /// frees a batch's records and allocates the next batch's right after: given
    /// back and taken again, each page costs a fault every time. Peak memory is
    /// unchanged; only its return waits. glibc only (`mallopt`, looked up at
    /// run time since the C module does not export `malloc.h`); elsewhere nothing.
    package static func keepFreedMemory(upTo bytes: Int32) {
        #if canImport(Glibc)
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        // glibc's M_TRIM_THRESHOLD and M_TOP_PAD.
        let trimThreshold: Int32 = -1, topPad: Int32 = -2
        _ = mallopt(trimThreshold, bytes)
        _ = mallopt(topPad, bytes / 4)
        #endif
    }
}
