#if canImport(Darwin)
import Foundation
import ShareQueueCore

extension QueueDirectory {
    /// Opens the queue in a folder of the App Group's shared container, the one
    /// place an app and its extensions can both reach.
    ///
    /// `let queue = try QueueDirectory(appGroup: "group.com.example.notes")`
    /// - Parameters:
    ///   - identifier: The App Group, as both the app's and the extension's entitlements name it.
    ///   - folder: The queue's folder inside the container.
    /// - Throws: `.configuration` when there is no container for the group (an
    ///   entitlement is missing): it never falls back to a private folder, which
    ///   the other side would never read; and what ``QueueDirectory/init(path:)`` throws.
    public init(appGroup identifier: String, folder: String = "ShareQueue") throws(ShareQueueError) {
        guard let container = FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: identifier) else {
            throw ShareQueueError(.configuration, "there is no container for the App Group '\(identifier)'; check the App Groups entitlement of the app and its extension")
        }
        try self.init(path: container.appendingPathComponent(folder, isDirectory: true).path)
    }
}
#endif
