import ShareQueueCore

/// Shell completion scripts for bash, zsh and fish, built from the option
/// table as `--help` is, so that every option a tool accepts is offered.
extension Tool {
    package func completionScript(for shell: String) throws(ShareQueueError) -> String {
        switch shell {
        case "bash": return bashCompletion
        case "zsh": return zshCompletion
        case "fish": return fishCompletion
        default: throw ShareQueueError(.invalidArgument, "--generate-completion-script needs bash, zsh or fish, not '\(shell)'")
        }
    }

    private var visibleOptions: [OptionSpec] { options.filter { !$0.hidden } }
    private var functionName: String { "_" + name.replacing("-", with: "_") }

    var bashCompletion: String {
        var cases = ""
        for option in visibleOptions where option.value != nil {
            let names = option.names.joined(separator: "|")
            switch option.kind {
            case .directory: cases += "        \(names)) _share_queue_reply compgen -d -- \"$cur\"; compopt -o filenames 2> /dev/null; return ;;\n"
            case .file: cases += "        \(names)) _share_queue_reply compgen -f -- \"$cur\"; compopt -o filenames 2> /dev/null; return ;;\n"
            case .choices(let values): cases += "        \(names)) _share_queue_reply compgen -W '\(values.joined(separator: " "))' -- \"$cur\"; return ;;\n"
            case .text, .none: cases += "        \(names)) COMPREPLY=(); return ;;\n"
            }
        }
        let allNames = visibleOptions.flatMap(\.names).joined(separator: " ")
        // With arguments of its own, a word that is not an option is the tool's to take; without, options are offered.
        let optionTest = argumentsHelp.isEmpty ? "true" : "[[ $cur == -* ]]"
        return """
            # bash completion for \(name): source <(\(name) --generate-completion-script bash)
            _share_queue_reply() {
                COMPREPLY=()
                local line
                while IFS= read -r line; do COMPREPLY+=("$line"); done < <("$@")
            }
            \(functionName)() {
                local cur=${COMP_WORDS[COMP_CWORD]} prev=
                (( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD-1]}
                # Bash splits --name=value into --name, = and value.
                if [[ $cur == = ]]; then
                    cur=
                elif [[ $prev == = ]] && (( COMP_CWORD > 1 )); then
                    prev=${COMP_WORDS[COMP_CWORD-2]}
                fi
                case $prev in
            \(cases)    esac
                if \(optionTest); then _share_queue_reply compgen -W '\(allNames)' -- "$cur"; else COMPREPLY=(); fi
            }
            complete -F \(functionName) \(name)

            """
    }

    var zshCompletion: String {
        var specs: [String] = []
        for option in visibleOptions {
            let help = "[" + zshQuoted(option.help.replacing("\\", with: "\\\\").replacing("[", with: "\\[").replacing("]", with: "\\]")) + "]"
            var tail = ""
            if let value = option.value {
                let message = zshQuoted(value).replacing(":", with: "\\:")
                switch option.kind {
                case .directory: tail = ":\(message):_files -/"
                case .file: tail = ":\(message):_files"
                case .choices(let values): tail = ":\(message):(\(values.joined(separator: " ")))"
                case .text, .none: tail = ":\(message): "
                }
            }
            let repeated = option.repeatable ? "*" : ""
            if option.names.count == 1 {
                specs.append("'\(repeated)\(option.names[0])\(help)\(tail)'")
            } else {
                let exclusion = option.repeatable ? "" : "(\(option.names.joined(separator: " ")))"
                specs.append("'\(exclusion)\(repeated)'{\(option.names.joined(separator: ","))}'\(help)\(tail)'")
            }
        }
        for (argument, _) in argumentsHelp { specs.append("'*:\(zshQuoted(argument).replacing(":", with: "\\:")): '") }
        let function = "_" + name
        return """
            #compdef \(name)
            # zsh completion for \(name): save as _\(name) in a directory of $fpath, or source it after compinit.
            \(function)() {
                _arguments -s -S : \\
                    \(specs.joined(separator: " \\\n        "))
            }
            if [[ $funcstack[1] == \(function) ]]; then \(function) "$@"; else compdef \(function) \(name); fi

            """
    }

    private func zshQuoted(_ text: String) -> String { text.replacing("'", with: "'\\''") }

    var fishCompletion: String {
        var lines = ["# fish completion for \(name): \(name) --generate-completion-script fish > ~/.config/fish/completions/\(name).fish",
                     "complete -c \(name) -f"]
        for option in visibleOptions {
            var line = "complete -c \(name)"
            for optionName in option.names {
                line += optionName.hasPrefix("--") ? " -l \(optionName.dropFirst(2))" : " -s \(optionName.dropFirst())"
            }
            switch option.kind {
            case .directory: line += " -x -a '(__fish_complete_directories (commandline -ct))'"
            case .file: line += " -r -F"
            case .choices(let values): line += " -x -a '\(values.joined(separator: " "))'"
            case .text: line += " -x"
            case .none: break
            }
            lines.append(line + " -d '\(option.help.replacing("\\", with: "\\\\").replacing("'", with: "\\'"))'")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
