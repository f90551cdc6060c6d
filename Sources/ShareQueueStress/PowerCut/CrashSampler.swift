/// Which crash states of a run to explore: all of them when there are no more
/// than the budget, else, for every cut, its two extremes (all kept, as a kill
/// leaves it; all lost) and each state one choice away from an extreme, then a
/// seeded random sample of the rest.
///
/// The states one choice away from keeping everything are where a left-out sync
/// shows: the one write it should have made durable is lost, and all that came
/// after it survives. A random sample finds such a state in a large cut only by
/// luck, so a verdict of the mutation catalogue would hang on the seed.
struct CrashSampler {
    /// One state: a cut and a choice for each of its items.
    struct Pick {
        let cut: Int
        let choices: [Int]
    }

    let cuts: [CrashStates.Cut]
    let picks: [Pick]
    let exhaustive: Bool

    init(_ states: CrashStates, budget: Int, seed: UInt64) {
        cuts = (0...states.operations.count).map(states.cut)
        let total = cuts.reduce(0) { sum, cut in sum.addingReportingOverflow(cut.stateCount).overflow ? Int.max : sum + cut.stateCount }
        var picks: [Pick] = []
        exhaustive = total <= budget
        if exhaustive {
            for cut in cuts {
                var choices = [Int](repeating: 0, count: cut.items.count)
                enumeration: while true {
                    picks.append(Pick(cut: cut.position, choices: choices))
                    for index in choices.indices {
                        choices[index] += 1
                        if choices[index] < cut.items[index].optionCount { continue enumeration }
                        choices[index] = 0
                    }
                    break
                }
            }
        } else {
            var random = SplitMix64(seed: seed)
            // The extremes and the states next to keeping everything first, then those next to losing
            // everything; three quarters of the budget at most, so that the random sample keeps a share.
            var nearKept: [Pick] = []
            var nearLost: [Pick] = []
            for cut in cuts {
                nearKept += Self.neighbours(of: cut.items.map(Self.keepAll), in: cut)
                nearLost += Self.neighbours(of: cut.items.map(Self.dropAll), in: cut)
            }
            let share = budget * 3 / 4
            for group in [nearKept, nearLost] where picks.count < share {
                var group = group
                if picks.count + group.count > share {
                    group.shuffle(using: &random)
                    group.removeLast(picks.count + group.count - share)
                }
                picks += group
            }
            while picks.count < budget {
                let cut = cuts[Int(random.next() % UInt64(cuts.count))]
                picks.append(Pick(cut: cut.position, choices: cut.items.map { Int(random.next() % UInt64($0.optionCount)) }))
            }
        }
        self.picks = picks
    }

    /// The state `extreme` itself and each state that differs from it in one choice.
    private static func neighbours(of extreme: [Int], in cut: CrashStates.Cut) -> [Pick] {
        var out = [Pick(cut: cut.position, choices: extreme)]
        for (index, item) in cut.items.enumerated() {
            for option in 0..<item.optionCount where option != extreme[index] {
                var choices = extreme
                choices[index] = option
                out.append(Pick(cut: cut.position, choices: choices))
            }
        }
        return out
    }

    private static func keepAll(_ item: CrashStates.Item) -> Int {
        if case .metadataPrefix(let operations) = item { return operations.count }
        return 0
    }

    private static func dropAll(_ item: CrashStates.Item) -> Int {
        if case .metadataPrefix = item { return 0 }
        return 1
    }
}

/// A small, fast, seeded generator (Steele, Lea and Flood's SplitMix64), so that a seed replays a sample.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
