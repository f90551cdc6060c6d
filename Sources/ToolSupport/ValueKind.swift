/// What an option's value is, so that shell completion can offer the right
/// things: directories, files, a fixed list, or nothing it could guess.
package enum ValueKind: Equatable {
    case none
    case text
    case directory
    case file
    case choices([String])

    /// The kind a placeholder names: `DIR` a directory, `FILE` or `PATH` a file,
    /// `a|b` one of those words; any other placeholder is free text.
    package init(placeholder: String?) {
        switch placeholder {
        case nil: self = .none
        case "DIR": self = .directory
        case "FILE", "PATH": self = .file
        case let value? where value.contains("|"): self = .choices(value.split(separator: "|").map(String.init))
        default: self = .text
        }
    }
}
