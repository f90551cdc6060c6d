#if canImport(Glibc)
import CLinuxSystem
#endif

extension Host {
    /// Asks the C library to keep memory a program frees for its next
    /// allocations instead of handing it back to the kernel at once. A drain
    /// frees a batch's records and allocates the next batch's right after: given
    /// back and taken again, each page costs a fault every time. Peak memory is
    /// unchanged; only its return waits. glibc only; elsewhere nothing.
    /// The corresponding C function is `mallopt`, with `M_TRIM_THRESHOLD` and `M_TOP_PAD`.
    package static func keepFreedMemory(upTo bytes: Int32) {
        #if canImport(Glibc)
        _ = mallopt(M_TRIM_THRESHOLD, bytes)
        _ = mallopt(M_TOP_PAD, bytes / 4)
        #endif
    }
}
