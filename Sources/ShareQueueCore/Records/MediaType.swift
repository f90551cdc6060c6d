/// A media type guessed from a file name's extension, for attachments.
enum MediaType {
    private static let byExtension: [String: String] = [
        "txt": "text/plain", "md": "text/markdown", "html": "text/html", "htm": "text/html", "css": "text/css",
        "csv": "text/csv", "json": "application/json", "xml": "application/xml", "pdf": "application/pdf",
        "zip": "application/zip", "gz": "application/gzip", "tar": "application/x-tar",
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp",
        "heic": "image/heic", "heif": "image/heif", "svg": "image/svg+xml", "tif": "image/tiff", "tiff": "image/tiff",
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "wav": "audio/wav", "aac": "audio/aac",
        "mp4": "video/mp4", "mov": "video/quicktime", "m4v": "video/x-m4v", "webm": "video/webm",
        "vcf": "text/vcard", "ics": "text/calendar", "rtf": "application/rtf",
        "doc": "application/msword", "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls": "application/vnd.ms-excel", "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt": "application/vnd.ms-powerpoint", "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "key": "application/vnd.apple.keynote", "pages": "application/vnd.apple.pages", "numbers": "application/vnd.apple.numbers",
    ]

    /// The media type of `fileName`'s extension (ASCII case-insensitive), or `application/octet-stream`.
    static func guess(fileName: String) -> String {
        safeExtension(of: fileName).flatMap { byExtension[$0] } ?? "application/octet-stream"
    }

    /// The extension kept on a stored copy: after the last '.', not a leading one, 1 to 10
    /// ASCII letters and digits, lower-cased as ASCII; else none. Checked on the bytes
    /// before any lower-casing: a non-ASCII letter (U+212A KELVIN SIGN) can lower-case to an ASCII one.
    static func safeExtension(of fileName: String) -> String? {
        let bytes = fileName.utf8
        guard let dot = bytes.lastIndex(of: UInt8(ascii: ".")), dot != bytes.startIndex else { return nil }
        let ext = bytes[bytes.index(after: dot)...]
        guard (1...10).contains(ext.count), ext.allSatisfy({ isASCIILetterOrDigit($0) }) else { return nil }
        return String(decoding: ext.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
    }

    private static func isASCIILetterOrDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }
}
