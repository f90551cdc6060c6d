/// At most `limit` of the items offered, each as likely as any other to be kept (reservoir sampling):
/// a bounded choice among however many names a directory holds that, run after run, comes to each of them,
/// where the first `limit` found would be the same ones every time, and could be ones that never go.
struct BoundedSample<Element> {
    let limit: Int
    private(set) var items: [Element] = []
    private var offered = 0

    init(limit: Int) { self.limit = limit }

    mutating func offer(_ item: Element) {
        offered += 1
        if items.count < limit {
            items.append(item)
            return
        }
        let slot = Int.random(in: 0..<offered)
        if slot < limit { items[slot] = item }
    }
}
