/// A sink that wraps another and marks every error it throws, other than a
/// `ShareQueueError` or a `RecordRefusal`, as the sink's: a drain then rethrows it as it is,
/// rather than taking it for its own reading or writing that failed (`.ioError`).
struct SinkErrorMarking<Base: DrainSink>: DrainSink {
    /// An error the wrapped sink threw; it reads as that error.
    struct Failure: SinkRefusal {
        let underlying: any Error
        var description: String { "\(underlying)" }
        var recordedReason: String {
            (underlying as? any SinkRefusal)?.recordedReason ?? "the sink refused the batch (\(type(of: underlying)))"
        }
    }

    var sink: Base

    init(_ sink: Base) { self.sink = sink }

    mutating func deliver(_ batch: DrainBatch) throws {
        do { try sink.deliver(batch) } catch let error as ShareQueueError { throw error } catch let refusal as RecordRefusal {
            throw refusal
        } catch { throw Failure(underlying: error) }
    }

    func deliveredPosition() throws -> DrainPosition? {
        do { return try sink.deliveredPosition() } catch let error as ShareQueueError { throw error } catch { throw Failure(underlying: error) }
    }

    var failuresAreRefusals: Bool { sink.failuresAreRefusals }
    var needsRecords: Bool { sink.needsRecords }
}
