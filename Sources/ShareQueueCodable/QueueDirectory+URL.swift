#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShareQueueCore

extension QueueDirectory {
    /// Opens the queue in the folder at a file URL, as `init(path:)` does.
    ///
    /// `let queue = try QueueDirectory(url: container.appending(path: "ShareQueue"))`
    /// - Parameter url: The queue's folder, such as one in the App Group container.
    /// - Throws: `.invalidArgument` for a URL that is not a file URL, and what `init(path:)` throws.
    public init(url: URL) throws(ShareQueueError) {
        guard url.isFileURL else { throw ShareQueueError(.invalidArgument, "a queue is a folder: \(url) is not a file URL") }
        // A folder's URL ends in a slash, which the path leaves out, as `path` is spelled in paths.
        var path = url.path(percentEncoded: false)
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        try self.init(path: path)
    }
}
