/// The known option an unknown one most likely meant, for "did you mean".
enum OptionSuggestion {
    /// The nearest of `names` to `typed`: one it begins (`--requeue` for
    /// `--requeue-dead`), else the closest by edit distance, counting a swap of
    /// two neighbours as one edit, if that is at most a third of its length.
    static func nearest(to typed: String, among names: [String]) -> String? {
        let longNames = names.filter { $0.hasPrefix("--") }
        if typed.count >= 4, case let started = longNames.filter({ $0.hasPrefix(typed) }), started.count == 1 { return started[0] }
        let typedCharacters = Array(typed)
        let limit = max(1, typedCharacters.count / 3)
        var best: (name: String, distance: Int)? = nil
        for name in names {
            let distance = editDistance(typedCharacters, Array(name))
            if distance <= limit, distance < (best?.distance ?? .max) { best = (name, distance) }
        }
        return best?.name
    }

    /// Insertions, deletions, substitutions and adjacent swaps (optimal string alignment).
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { current[j] = min(current[j], previous2[j - 2] + 1) }
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }
}
