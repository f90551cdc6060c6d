import Foundation

/// One line of a `SHARE_QUEUE_TRACE` file, with paths made relative to the
/// workload's root: what a tool changed, synced or announced.
/// A step through a descriptor also names the file's inode number, which stays
/// right when another process renamed the file in between.
enum TraceStep: Equatable {
    case create(String, inode: UInt64)
    case mkdir(String)
    case write(String, inode: UInt64, offset: Int, bytes: [UInt8])
    case truncate(String, inode: UInt64, size: Int)
    case sync(String, inode: UInt64)
    case rename(String, to: String)
    case link(String, to: String)
    case unlink(String)
    /// A tool's own event: `printed ID...` or `delivered ID...`.
    case mark([String])

    /// Reads a trace, keeping the steps on files under `root` (an absolute path), with paths relative to it.
    static func read(_ path: String, root: String) throws -> [TraceStep] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return text.split(separator: "\n").compactMap { parse(String($0), root: root) }
    }

    /// One line, or nil for a line about a file outside `root`.
    static func parse(_ line: String, root: String) -> TraceStep? {
        let fields = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        guard fields.count >= 2 else { return nil }
        let rest = Array(fields.dropFirst(2))
        func path(_ index: Int) -> String? {
            guard index < rest.count else { return nil }
            let absolute = decode(rest[index])
            if absolute == root { return "" }
            guard absolute.hasPrefix(root + "/") else { return nil }
            return String(absolute.dropFirst(root.count + 1))
        }
        func number(_ index: Int) -> UInt64 { index < rest.count ? UInt64(rest[index]) ?? 0 : 0 }
        switch fields[0] {
        case "create": return path(0).map { .create($0, inode: number(1)) }
        case "mkdir": return path(0).map { .mkdir($0) }
        case "unlink": return path(0).map { .unlink($0) }
        case "sync": return path(0).map { .sync($0, inode: number(1)) }
        case "truncate": return path(0).map { .truncate($0, inode: number(1), size: Int(rest[2]) ?? 0) }
        case "write":
            guard let file = path(0), rest.count == 4, let offset = Int(rest[2]) else { return nil }
            return .write(file, inode: number(1), offset: offset, bytes: hexBytes(rest[3]))
        case "rename", "link":
            guard let from = path(0), let to = path(1) else { return nil }
            return fields[0] == "rename" ? .rename(from, to: to) : .link(from, to: to)
        case "mark": return .mark(rest.map(decode))
        default: return nil
        }
    }

    /// Undoes the trace's `%XX` escapes.
    static func decode(_ field: String) -> String {
        guard field.contains("%") else { return field }
        var bytes: [UInt8] = []
        var utf8 = Array(field.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func hexBytes(_ text: String) -> [UInt8] {
        func nibble(_ c: UInt8) -> UInt8 { c <= UInt8(ascii: "9") ? c - UInt8(ascii: "0") : c - UInt8(ascii: "a") + 10 }
        let digits = Array(text.utf8)
        var bytes = [UInt8]()
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index + 1 < digits.count {
            bytes.append(nibble(digits[index]) << 4 | nibble(digits[index + 1]))
            index += 2
        }
        return bytes
    }
}
