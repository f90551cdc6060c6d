import Foundation
import ShareQueue
import SharedTypes

// The share extension, as a command-line program:
//   ShareExtension --dir DIR link URL TITLE [--tag T]... [--note TEXT] [--attach FILE]...
//   ShareExtension --dir DIR wallpaper NAME [--sha256 HEX]
// It appends and prints the record's id. On iOS the extension would call
// completeRequest once append returns: the record is then on disk.

let usage = """
    usage: ShareExtension --dir DIR link URL TITLE [--tag T]... [--note TEXT] [--attach FILE]...
           ShareExtension --dir DIR wallpaper NAME [--sha256 HEX]
    """

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("ShareExtension: error: \(message)\n".utf8))
    if status == 64 { FileHandle.standardError.write(Data((usage + "\n").utf8)) }
    exit(status)
}

// Options with a value, anywhere; the rest are the command and its arguments.
var options: [String: [String]] = [:]
var positional: [String] = []
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    if ["--dir", "--tag", "--note", "--sha256", "--attach"].contains(argument) {
        guard let value = arguments.popFirst() else { fail("\(argument) needs a value", status: 64) }
        options[argument, default: []].append(value)
    } else if argument.hasPrefix("-") {
        fail("unknown option '\(argument)'", status: 64)
    } else {
        positional.append(argument)
    }
}
guard let dir = options["--dir"]?.last else { fail("--dir is required", status: 64) }

/// Appends what was shared, as the extension's view controller does before `completeRequest`.
@MainActor
func share() async throws(ShareQueueError) {
    // On iOS: a folder in the App Group's container, the same one the app opens.
    let appender = try QueueAppender(directory: QueueDirectory(path: dir))
    switch (positional.first, positional.count) {
    case ("link", 3):
        guard let url = URL(string: positional[1]), url.scheme != nil else { fail("not a URL: '\(positional[1])'", status: 64) }
        let link = SharedLink(url: url, title: positional[2], sharedAt: Date(), tags: options["--tag"] ?? [], note: options["--note"]?.last)
        // The lock is held for one write; once append returns, the record will be delivered.
        // Awaited: the write and its fsync run off the caller's thread, as an extension's main actor wants.
        // Files the user shared with it (a page's preview, say) are copied into the queue
        // first; if the append fails, the copies are removed. The host receives files of its own.
        let files = (options["--attach"] ?? []).map { URL(fileURLWithPath: $0) }
        let id = try await appender.append(link, source: "share-extension", attaching: files)
        print(id)
    case ("wallpaper", 2):
        let current = CurrentWallpaper(name: positional[1], imageSHA256: options["--sha256"]?.last)
        // A keyed value: appended only if it differs from the last one appended with this key.
        let published = try await appender.appendIfChanged(current, source: "share-extension", key: "current-wallpaper")
        print(published.id)
        if !published.appended { FileHandle.standardError.write(Data("ShareExtension: unchanged, nothing appended\n".utf8)) }
    default:
        fail(positional.isEmpty ? "no command" : "'\(positional.joined(separator: " "))' is not a command", status: 64)
    }
}

do {
    try await share()
} catch {
    fail("\(error)", status: error.exitStatus)
}
