/// A file that travels with a record. The producer copies it into the queue's
/// `attachments` folder first; a drain hands it on and records where it went.
/// Attachments are equal when their fields have the same bytes (names as UTF-8).
public struct Attachment: Sendable, Hashable, Codable {
    /// The file's original name, without its folder.
    public var name: String
    /// The copy's name in the queue's `attachments` folder: a UUID and the original extension.
    public var file: String
    /// The file's length in bytes.
    public var size: Int64
    /// SHA-256 of the contents, 64 lower-case hexadecimal digits.
    public var sha256: String
    /// A media type guessed from the extension, such as `image/jpeg`.
    public var type: String
    /// Where the host can read the file after delivery (absolute); absent in the queue.
    public var path: String?

    /// The most bytes of attachments one record has that `share-append` copies in and a
    /// drain reads, unless told otherwise: 256 MiB. One default for both, so that a drain
    /// delivers what a producer may write.
    public static let defaultMaxBytes: Int64 = 256 << 20

    /// The most attachments one record has: each costs a drain an open, and one copied out a
    /// file and a sync of its folder, however small, so a record's bytes alone do not bound them.
    public static let maximumPerRecord = 1000

    /// The sizes of `attachments` added up, each entry counted (a file named twice is read twice),
    /// and Int64.max when the sum would overflow it.
    public static func totalBytes(_ attachments: [Attachment]) -> Int64 {
        var total: Int64 = 0
        for attachment in attachments {
            let (sum, overflow) = total.addingReportingOverflow(attachment.size)
            if overflow { return .max }
            total = sum
        }
        return total
    }

    /// An attachment with these fields; producers get one from
    /// ``AttachmentStore/add(copyOf:maxBytes:)`` instead, which makes the copy it describes.
    /// - Parameters:
    ///   - name: The file's original name, without its folder.
    ///   - file: The copy's name in the queue's `attachments` folder.
    ///   - size: The file's length in bytes.
    ///   - sha256: SHA-256 of the contents, 64 lower-case hexadecimal digits.
    ///   - type: A media type, such as `image/jpeg`.
    ///   - path: Where the host can read the file after delivery.
    public init(name: String, file: String, size: Int64, sha256: String, type: String, path: String? = nil) {
        self.name = name
        self.file = file
        self.size = size
        self.sha256 = sha256
        self.type = type
        self.path = path
    }

    /// Whether both have the same fields, strings compared as UTF-8 bytes.
    public static func == (lhs: Attachment, rhs: Attachment) -> Bool {
        ByteKey.equal(lhs.name, rhs.name) && ByteKey.equal(lhs.file, rhs.file) && lhs.size == rhs.size
            && ByteKey.equal(lhs.sha256, rhs.sha256) && ByteKey.equal(lhs.type, rhs.type) && ByteKey.equal(lhs.path, rhs.path)
    }

    /// Hashes the copy's name and contents digest, as UTF-8 bytes.
    public func hash(into hasher: inout Hasher) {
        ByteKey.hashBytes(of: file, into: &hasher)
        ByteKey.hashBytes(of: sha256, into: &hasher)
    }

    /// The entry as stored, its members sorted by name as a producer writes the objects it makes.
    var jsonValue: JSONValue {
        var fields: JSONMembers<JSONValue> = ["file": .string(file), "name": .string(name)]
        if let path { fields["path"] = .string(path) }
        fields["sha256"] = .string(sha256)
        fields["size"] = .number(String(size))
        fields["type"] = .string(type)
        return .object(fields)
    }

    init(_ value: JSONValue) throws(ShareQueueError) {
        guard case .object(let fields) = value,
              case .string(let name)? = fields["name"], case .string(let file)? = fields["file"],
              case .number(let size)? = fields["size"], let bytes = Self.size(stored: size),
              case .string(let sha256)? = fields["sha256"], case .string(let type)? = fields["type"] else {
            throw ShareQueueError(.badData, "not a record: an attachment lacks name, file, size, sha256 or type")
        }
        // A stored `path` is ignored (Format.md §7.3): only a drain says where a file is, when it delivers it.
        self.init(name: name, file: file, size: bytes, sha256: sha256, type: type)
    }

    /// A `size` as stored: digits only, any number of them (Format.md §7.3). One past
    /// Int64.max reads as Int64.max, over every drain's limit, so that its record becomes a
    /// dead letter unread, as any record over the limit does, rather than damage.
    static func size(stored digits: String) -> Int64? {
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int64(digits) ?? .max
    }

    /// Whether `file` is a name this queue could have made: no folders, no dot files.
    var hasSafeFileName: Bool {
        let scalars = file.unicodeScalars
        guard let first = scalars.first, first != ".", scalars.count <= 80 else { return false }
        return scalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == ".") }
            && !file.contains("..")
    }
}
