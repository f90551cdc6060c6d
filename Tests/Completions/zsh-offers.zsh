# Prints, one per line, what zsh offers for the command line "$2" once the
# completion script "$1" is loaded: an interactive zsh in a pseudo-terminal
# completes the line, and a wrapper around compadd prints each match it adds.
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PROMPT=''"
zpty -w z "autoload -Uz compinit && compinit -u -D"
zpty -w z "source ${(q)1}"
zpty -w z "bindkey '^I' complete-word"
# Calls that only ask which words match (-O, -A, -D) offer nothing: passed through.
zpty -w z 'compadd() { if (( ${@[(I)-[OAD]]} )); then builtin compadd "$@"; return; fi; local -a hits; builtin compadd -A hits "$@"; (( $#hits )) && print -rl -- "<""match>"${^hits}; builtin compadd "$@" }'
zpty -w z 'comppostfuncs=( __captured ); __captured() { print -r -- "<""done>"; exit }'
zpty -n -w z "$2"$'\t'
local line
while zpty -r z line; do
    [[ $line == *'<done>'* ]] && break
    if [[ $line == *'<match>'* ]]; then
        line=${line##*<match>}
        print -r -- ${${line//$'\r'/}//$'\n'/}
    fi
done
zpty -d z
