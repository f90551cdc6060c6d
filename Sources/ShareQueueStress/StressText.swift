/// The text of a stress record: it names its producer and sequence number and
/// carries filler of a length that varies with both, so any damaged, truncated
/// or swapped record is caught by comparing it with what it must be.
enum StressText {
    static func make(producer: Int, sequence: Int) -> String {
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        let filler = String(repeating: letters[(producer * 31 + sequence) % 26], count: (producer * 7 + sequence * 13) % 300)
        return "stress producer \(producer) record \(sequence) \(filler)"
    }

    /// The producer and sequence a text names, if it is exactly what `make` gives for them.
    static func parse(_ text: String) -> (producer: Int, sequence: Int)? {
        let words = text.split(separator: " ", omittingEmptySubsequences: false)
        guard words.count == 6, words[0] == "stress", words[1] == "producer", words[3] == "record",
              let producer = Int(words[2]), let sequence = Int(words[4]),
              make(producer: producer, sequence: sequence) == text else { return nil }
        return (producer, sequence)
    }
}
