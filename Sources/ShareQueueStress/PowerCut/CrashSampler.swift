/// Which crash states of a run to explore: all of them when there are no more
/// than the budget, else every cut's two extremes (all kept, as a kill leaves
/// it; all lost) and a seeded random sample of the rest.
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
            if 2 * cuts.count <= budget / 2 {
                for cut in cuts {
                    picks.append(Pick(cut: cut.position, choices: cut.items.map(Self.keepAll)))
                    picks.append(Pick(cut: cut.position, choices: cut.items.map(Self.dropAll)))
                }
            }
            var random = SplitMix64(seed: seed)
            while picks.count < budget {
                let cut = cuts[Int(random.next() % UInt64(cuts.count))]
                picks.append(Pick(cut: cut.position, choices: cut.items.map { Int(random.next() % UInt64($0.optionCount)) }))
            }
        }
        self.picks = picks
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
