/// A coding key for an array index, or a name of the coder's own such as `super`.
struct CoderKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(index: Int) {
        stringValue = "Index \(index)"
        intValue = index
    }

    init(name: String) {
        stringValue = name
        intValue = nil
    }

    init?(stringValue: String) { self.init(name: stringValue) }
    init?(intValue: Int) { self.init(index: intValue) }
}
