import Dispatch
import Foundation
import ShareQueue
import ShareQueueSystem

/// `share-stress notices DIR COUNT`: waits on a queue's change notices, as a running
/// host does, and prints the monotonic clock's reading (seconds) at each of the first
/// COUNT. A process of its own, so that a test can time the notices of the library's
/// `changes()` without its own busy threads delaying them.
enum NoticeProgram {
    static func main() -> Never {
        let arguments = Array(CommandLine.arguments.dropFirst(2))
        guard arguments.count == 2, let count = Int(arguments[1]), count > 0 else {
            FileHandle.standardError.write(Data("usage: share-stress notices DIR COUNT\n".utf8))
            Host.exit(64)
        }
        let done = DispatchSemaphore(value: 0)
        let failed = Flag()
        Task {
            do {
                var seen = 0
                for await _ in try QueueDirectory(path: arguments[0]).changes() {
                    FileHandle.standardOutput.write(Data("\(Host.monotonicSeconds())\n".utf8))
                    seen += 1
                    if seen == count { break }
                }
            } catch {
                FileHandle.standardError.write(Data("share-stress notices: \(error)\n".utf8))
                failed.set()
            }
            done.signal()
        }
        done.wait()
        Host.exit(failed.isSet ? 74 : 0)
    }
}
