import Foundation
import ShareQueueCore

/// The benchmark's figures as a table for people or JSON Lines for programs.
enum BenchmarkReport {
    static func table(_ figures: [Benchmark.Figure], floor: CFloor, storeFloor: CFloor? = nil) -> String {
        var text = "figure".padding(toLength: 60, withPad: " ", startingAt: 0) + "value".leftPadded(14) + "floor".leftPadded(14) + "ratio".leftPadded(8) + "  target\n"
        for figure in figures {
            text += figure.name.padding(toLength: 60, withPad: " ", startingAt: 0)
            text += (format(figure.value) + " " + figure.unit).leftPadded(14)
            text += (figure.floor.map { format($0) + " " + figure.unit } ?? "-").leftPadded(14)
            text += (figure.ratio.map { String(format: "%.2f", $0) } ?? "-").leftPadded(8)
            text += "  " + figure.target + "\n"
        }
        text += "C floor: " + floor.description + "\n"
        return text + (storeFloor.map { "store floor: " + $0.description + "\n" } ?? "")
    }

    static func jsonLines(_ figures: [Benchmark.Figure]) -> String {
        figures.map { figure in
            let object: JSONMembers<JSONValue> = [
                "name": .string(figure.name), "unit": .string(figure.unit),
                "value": .number(String(format: "%.3f", figure.value)),
                "floor": figure.floor.map { .number(String(format: "%.3f", $0)) } ?? .null,
                "ratio": figure.ratio.map { .number(String(format: "%.3f", $0)) } ?? .null,
                "target": .string(figure.target),
            ]
            return String(decoding: JSONValue.object(object.sortedByName()).compactJSON, as: UTF8.self) + "\n"
        }.joined()
    }

    private static func format(_ value: Double) -> String {
        value >= 1000 ? String(format: "%.0f", value) : value >= 10 ? String(format: "%.1f", value) : String(format: "%.2f", value)
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? " " + self : String(repeating: " ", count: width - count) + self }
}
