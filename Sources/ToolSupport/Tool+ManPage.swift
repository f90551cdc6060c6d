/// The man page, built from the same option table as `--help`, so the two cannot drift.
extension Tool {
    package var manPage: String {
        var page = ".TH \"\(name.uppercased())\" \"1\" \"\" \"ShareQueue \(Tool.version)\" \"User Commands\"\n"
        page += ".SH \"NAME\"\n\(roff(name)) \\- \(roff(overview))\n"
        page += ".SH \"SYNOPSIS\"\n"
        for (index, line) in usage.split(separator: "\n").enumerated() {
            let words = line.drop { $0 == " " }.split(separator: " ", maxSplits: 1).map(String.init)
            if index > 0 { page += ".br\n" }
            page += ".B \(roff(words[0]))\n" + (words.count > 1 ? roff(words[1]) + "\n" : "")
        }
        page += ".SH \"DESCRIPTION\"\n\(roff(overview))\n"
        for (argument, help) in argumentsHelp { page += ".TP\n.I \(roff(argument))\n\(roff(help))\n" }
        page += ".SH \"OPTIONS\"\n"
        for option in options where !option.hidden {
            var label = option.names.map { "\\fB\(roff($0))\\fR" }.joined(separator: ", ")
            if let value = option.value { label += " \\fI\(roff(value))\\fR" }
            page += ".TP\n\(label)\n\(roff(option.help))\n"
        }
        page += section("EXIT STATUS", exitCodes) + section("ENVIRONMENT", environment) + section("FILES", files)
        if !examples.isEmpty {
            page += ".SH \"EXAMPLES\"\n"
            for example in examples { page += ".PP\n\(roff(example.purpose))\n.PP\n.RS 4\n.nf\n\(roff(example.command))\n.fi\n.RE\n" }
        }
        return page
    }

    private func section(_ title: String, _ entries: [(String, String)]) -> String {
        guard !entries.isEmpty else { return "" }
        return ".SH \"\(title)\"\n" + entries.map { ".TP\n.B \(roff($0.0))\n\(roff($0.1))\n" }.joined()
    }

    /// Text made safe for roff: backslashes and minus signs escaped, and a line
    /// that would start with a control character defused.
    private func roff(_ text: String) -> String {
        var escaped = text.replacing("\\", with: "\\e").replacing("-", with: "\\-")
        if escaped.hasPrefix(".") || escaped.hasPrefix("'") { escaped = "\\&" + escaped }
        return escaped
    }
}
