import CNATS

/// Checks what a libnats call returned; anything but `NATS_OK` is a failure to try
/// again later, since the records themselves were not at fault, unless the caller
/// knows it for the configuration's.
/// - Parameters:
///   - status: what the call returned.
///   - what: what was being done, as in "cannot connect to nats://host:4222".
///   - kind: what a failure means for the batch.
/// - Throws: ``ForwardingFailure`` of `kind`, with the client's own explanation.
func check(_ status: natsStatus, _ what: @autoclosure () -> String, kind: ForwardingFailure.Kind = .tryAgain) throws(ForwardingFailure) {
    guard status != NATS_OK else { return }
    throw ForwardingFailure(kind, "\(what()): \(explanation(of: status))")
}

/// The client's words for `status`, with the more precise last error of this thread when it has one.
func explanation(of status: natsStatus) -> String {
    let text = String(cString: natsStatus_GetText(status))
    var lastStatus = NATS_OK
    guard let last = nats_GetLastError(&lastStatus), lastStatus == status else { return text }
    var detail = Substring(String(cString: last))
    // The client prefixes its own source location, "(conn.c:2088): ", which says nothing to a user.
    if detail.hasPrefix("("), let close = detail.firstIndex(of: ")"), detail[close...].hasPrefix("): ") {
        detail = detail[detail.index(close, offsetBy: 3)...]
    }
    return detail.isEmpty || detail == text ? text : "\(text) (\(detail))"
}
