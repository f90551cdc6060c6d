import CNATS

extension JetStreamConnection {
    /// What the server says of a stream that exists.
    struct StreamShape {
        /// The subjects it captures, wildcards included.
        let subjects: [String]
        /// Its duplicate window, in nanoseconds.
        let duplicates: Int64
    }

    /// Makes sure the stream the options name is there and fits them, making it first when
    /// the options ask for that (`--create-stream`) and it does not exist.
    /// - Throws: ``ForwardingFailure``: `.configuration` when the stream is missing, or its
    ///   subjects or window differ, or it cannot be made as asked; `.tryAgain` when the
    ///   server cannot tell.
    func prepareStream(_ requirement: StreamRequirement) throws(ForwardingFailure) {
        guard let shape = try lookUpStream(requirement.name) else {
            guard requirement.creates else { throw requirement.missing(whileForwarding: false) }
            return try createStream(requirement)
        }
        try verify(shape, against: requirement)
    }

    /// After publishing failed: whether that was the stream going away, which no retry mends.
    /// - Throws: ``ForwardingFailure`` of kind `.configuration` when the stream is gone or no
    ///   longer fits; nothing when it is there or the server cannot tell.
    func checkStreamRemains(_ requirement: StreamRequirement) throws(ForwardingFailure) {
        let shape: StreamShape?
        do { shape = try lookUpStream(requirement.name) } catch { return }
        guard let shape else { throw requirement.missing(whileForwarding: true) }
        try verify(shape, against: requirement)
    }

    /// Deletes the stream `name` and all it holds.
    /// - Throws: ``ForwardingFailure`` of kind `.tryAgain` when the server does not.
    public func deleteStream(_ name: String) throws(ForwardingFailure) {
        try check(js_DeleteStream(context, name, nil, nil), "cannot delete the stream \(name)")
    }

    private func verify(_ shape: StreamShape, against requirement: StreamRequirement) throws(ForwardingFailure) {
        let captured = shape.subjects.contains { StreamRequirement.filter($0, captures: requirement.subject) }
        try requirement.check(subjects: shape.subjects, duplicates: shape.duplicates,
                              capturedBy: captured ? nil : streamCapturing(requirement.subject))
    }

    /// The stream's subjects and window, or nil when the server has no stream of that name.
    private func lookUpStream(_ name: String) throws(ForwardingFailure) -> StreamShape? {
        var info: UnsafeMutablePointer<jsStreamInfo>? = nil
        defer { jsStreamInfo_Destroy(info) }
        var code = jsErrCode(0)
        let found = js_GetStreamInfo(&info, context, name, nil, &code)
        if code == JSStreamNotFoundErr { return nil }
        try check(found, "cannot look up the stream \(name)")
        let config = info!.pointee.Config!.pointee
        let subjects = (0..<Int(config.SubjectsLen)).compactMap { config.Subjects[$0].map { String(cString: $0) } }
        return StreamShape(subjects: subjects, duplicates: config.Duplicates)
    }

    /// The stream that captures `subject`, if the server names one; nil when none does or it cannot tell.
    private func streamCapturing(_ subject: String) -> String? {
        var names: UnsafeMutablePointer<jsStreamNamesList>? = nil
        defer { jsStreamNamesList_Destroy(names) }
        var lookup = jsOptions()
        jsOptions_Init(&lookup)
        let status = subject.withCString { subject in
            lookup.Stream.Info.SubjectsFilter = subject
            return js_StreamNames(&names, context, &lookup, nil)
        }
        guard status == NATS_OK, let names = names?.pointee, names.Count > 0, let first = names.List[0] else { return nil }
        return String(cString: first)
    }

    private func createStream(_ requirement: StreamRequirement) throws(ForwardingFailure) {
        var config = jsStreamConfig()
        jsStreamConfig_Init(&config)
        var code = jsErrCode(0)
        let made = requirement.name.withCString { name in
            requirement.subject.withCString { subject in
                var subjects: [UnsafePointer<CChar>?] = [subject]
                return subjects.withUnsafeMutableBufferPointer { subjects in
                    config.Name = name
                    config.Subjects = subjects.baseAddress
                    config.SubjectsLen = 1
                    config.Storage = js_FileStorage
                    if let window = requirement.duplicateWindow { config.Duplicates = window }
                    var created: UnsafeMutablePointer<jsStreamInfo>? = nil
                    defer { jsStreamInfo_Destroy(created) }
                    return js_AddStream(&created, context, &config, nil, &code)
                }
            }
        }
        if made == NATS_OK { return }
        switch code {
        case JSStreamSubjectOverlapErr:
            throw requirement.capturedElsewhere(by: streamCapturing(requirement.subject))
        case JSStreamNameExistErr:
            // Another forwarder made it in the meantime: it must fit as well.
            guard let shape = try lookUpStream(requirement.name) else { break }
            return try verify(shape, against: requirement)
        case jsErrCode(0):
            break
        default:
            // The server refused the stream as asked: a setting it does not take.
            throw ForwardingFailure(.configuration, "cannot make the stream \(requirement.name) (\(requirement.option)) for \(requirement.subject): \(explanation(of: made))")
        }
        throw ForwardingFailure(.tryAgain, "cannot make the stream \(requirement.name) for \(requirement.subject): \(explanation(of: made))")
    }
}
