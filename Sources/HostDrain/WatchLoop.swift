import ShareQueueCore
import ShareQueueSystem
import ToolSupport

/// `host-drain --watch`: drains when records arrive, until SIGINT or SIGTERM.
///
/// The first record after a quiet spell goes out at once; during a burst a
/// drain starts at most once per debounce interval, so a burst of appends
/// becomes a few batches. Between events the process sleeps in the kernel. A
/// failed drain (a busy queue, a refusing sink) is retried with a growing
/// delay, and every minute a drain runs anyway, in case an event was missed.
struct WatchLoop {
    let directory: QueueDirectory
    var options: DrainOptions
    let debounce: Double
    let quiet: Bool
    static let idleRecheck = 60.0

    init(directory: QueueDirectory, options: DrainOptions, debounce: Double, quiet: Bool) {
        self.directory = directory
        self.options = options
        self.debounce = debounce
        self.quiet = quiet
        self.options.shouldStop = { StopRequest.isRequested }
    }

    func run(into sink: inout any DrainSink) throws(ShareQueueError) {
        let stopFD = StopRequest.install()
        let watcher = try directory.changeWatcher()
        defer { watcher.close() }
        let stopped = { StopRequest.isRequested }
        var lastDrain = -Double.infinity
        var retryDelay: Double? = nil
        while !StopRequest.isRequested {
            // Leading edge: go at once after a quiet spell; during a burst, once
            // per interval; after a failure, not before the retry delay, whatever arrives.
            let sinceLast = Host.monotonicSeconds() - lastDrain
            let wait = max(debounce, retryDelay ?? 0)
            if sinceLast < wait && !watcher.pause(milliseconds: Int((wait - sinceLast) * 1000), stopFD: stopFD, isStopRequested: stopped) { break }
            lastDrain = Host.monotonicSeconds()
            do {
                // Opened again for each drain, so that its format marker is read again: a queue that a newer
                // version took over since is not touched (78), and the path given is the queue drained.
                let summary = try HostDrainTool.drain(try QueueDirectory(path: directory.path), options: options, into: &sink)
                if !quiet && (summary.delivered > 0 || summary.quarantined > 0 || summary.superseded > 0 || summary.deadLettered > 0) {
                    HostDrainTool.report(summary)
                }
                retryDelay = nil
            } catch where Tool.isPassing(error) {
                if StopRequest.isRequested { break }
                // No batch can reach a reader that is gone: trying again would go on for good.
                if (sink as? StandardOutputSink)?.readerIsGone == true { throw error }
                HostDrainTool.tool.warn("\(error); trying again")
                retryDelay = min(60, (retryDelay ?? 0.5) * 2)
            }
            let wake = watcher.wait(milliseconds: Int((retryDelay ?? Self.idleRecheck) * 1000), stopFD: stopFD, isStopRequested: stopped)
            if case .stopRequested = wake { break }
        }
    }
}
