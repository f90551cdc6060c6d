#!/bin/sh
# Installs share-append, host-drain and share-stress under PREFIX (default
# /usr/local): the tools in bin, their man pages in share/man/man1, and their
# bash, zsh and fish completions where each shell looks under a prefix. DESTDIR,
# if set, is put before every path, to stage the files for a package.
#
#   [PREFIX=/usr/local] [DESTDIR=DIR] sh Samples/install.sh [install|uninstall] [--from DIR]
#
# install builds release binaries (swift build -c release) unless --from names
# a folder that holds the three built already. uninstall removes exactly the
# files install puts there, and nothing else (the folders stay).
# install refuses a folder that a user other than root and the one running it,
# or a group other than root's, may change. Exit status: 0 done, 64 usage,
# 66 no built tool, 69 no swift, 73 cannot install (or, for uninstall, remove) a file.
set -eu
# Folders made here are 0755 whatever the caller's umask; each file gets its mode below.
umask 022

fail() { status=$1; shift; echo "install.sh: error: $*" >&2; exit "$status"; }
usage() { echo "usage: [PREFIX=/usr/local] [DESTDIR=DIR] sh Samples/install.sh [install|uninstall] [--from DIR]" >&2; exit 64; }

action=install
from=
while [ $# -gt 0 ]; do
    case $1 in
        install | uninstall) action=$1 ;;
        --from) [ $# -ge 2 ] || { echo "install.sh: error: --from needs a folder" >&2; usage; }; from=$2; shift ;;
        --from=*) from=${1#--from=} ;;
        -h | --help) sed -n '2,14s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "install.sh: error: unknown argument '$1'" >&2; usage ;;
    esac
    shift
done
prefix=${PREFIX:-/usr/local}
case $prefix in
    /*) ;;
    *) echo "install.sh: error: PREFIX must be an absolute path, not '$prefix'" >&2; usage ;;
esac
# A relative DESTDIR or --from names a place from where the caller is, not from the package.
caller=$(pwd)
destdir=${DESTDIR:-}
case $destdir in "" | /*) ;; *) destdir=$caller/$destdir ;; esac
case $from in "" | /*) ;; *) from=$caller/$from ;; esac
root=$destdir$prefix
tools="share-append host-drain share-stress"
cd "$(dirname "$0")/.."

# Where each shell looks under a prefix: bash-completion loads
# share/bash-completion/completions/NAME when NAME is first completed; zsh's
# compinit reads share/zsh/site-functions (on its default fpath for /usr and
# /usr/local); fish reads share/fish/vendor_completions.d.
completion_path() {
    case $1 in
        bash) echo "share/bash-completion/completions/$2" ;;
        zsh) echo "share/zsh/site-functions/_$2" ;;
        fish) echo "share/fish/vendor_completions.d/$2.fish" ;;
    esac
}

# Every file install puts under the prefix, one a line: all that uninstall removes.
installed_files() {
    for tool in $tools; do
        echo "bin/$tool"
        echo "share/man/man1/$tool.1"
        for shell in bash zsh fish; do completion_path "$shell" "$tool"; done
    done
}

if [ "$action" = uninstall ]; then
    # Each file that cannot be removed (a folder at its name, say) is named, and the rest still go.
    failed=
    for file in $(installed_files); do
        if [ -e "$root/$file" ] || [ -L "$root/$file" ]; then
            if rm -f "$root/$file"; then echo "removed $root/$file"; else echo "install.sh: error: cannot remove $root/$file" >&2; failed=1; fi
        fi
    done
    [ -z "$failed" ] || exit 73
    exit 0
fi

if [ -z "$from" ]; then
    command -v swift > /dev/null || fail 69 "swift is not on the PATH; install the Swift toolchain, 6.0 or later, or give --from DIR"
    swift build -c release >&2 || fail 73 "swift build -c release failed"
    from=$(swift build -c release --show-bin-path)
fi
for tool in $tools; do
    [ -f "$from/$tool" ] && [ -x "$from/$tool" ] || fail 66 "no built $tool in $from"
done

staged=$(mktemp -d "${TMPDIR:-/tmp}/share-queue-install.XXXXXX") || fail 73 "cannot make a temporary folder"
# The file being copied in, if any: an install stopped halfway leaves nothing behind.
copying=
trap 'rm -rf "$staged"; [ -z "$copying" ] || rm -f "$copying"' EXIT
trap 'exit 130' HUP INT TERM

# Fails unless $1 and every folder above it, both as written and where symlinks lead, are
# root's or this user's and, unless sticky, writable by no other user or group (but root's
# group): where another user may rename, a file installed as root could be replaced
# afterwards, or a name swapped for a symlink while it is written.
check_folder() {
    for path in "$1" "$(cd "$1" && pwd -P)"; do
        while :; do
            [ -n "$(find -H "$path" -prune \( -user 0 -o -user "$(id -u)" \) \
                    ! \( \( -perm -0002 -o -perm -0020 ! -group 0 \) ! -perm -1000 \) -print)" ] \
                || fail 73 "another user may change $path; not installing there"
            [ "$path" != / ] || break
            path=$(dirname "$path")
        done
    done
}

# Copies $2 to $root/$3 with mode $1 under a temporary name, then renames it
# into place: a tool that is running (host-drain --watch, say) keeps its old
# file, and nobody sees a half-copied one.
put() {
    target=$root/$3
    folder=$(dirname "$target")
    mkdir -p "$folder" || fail 73 "cannot create $folder"
    check_folder "$folder"
    # mv would move the file into a folder at the name, and call it installed.
    [ ! -d "$target" ] || fail 73 "a folder is in the way: $target"
    # A name made at random, by mktemp, so that no one can plant anything at it first.
    copying=$(mktemp "$folder/.$(basename "$target").XXXXXX") || fail 73 "cannot install $target"
    cp "$2" "$copying" && chmod "$1" "$copying" && mv -f "$copying" "$target" \
        || { rm -f "$copying"; fail 73 "cannot install $target"; }
    copying=
    echo "installed $target"
}

for tool in $tools; do
    put 0755 "$from/$tool" "bin/$tool"
    # The pages are shipped; a test keeps them equal to what --help-man prints.
    put 0644 "Samples/man/$tool.1" "share/man/man1/$tool.1"
    # The completions are generated from the tool's option table, as the tool prints them.
    for shell in bash zsh fish; do
        "$from/$tool" --generate-completion-script "$shell" > "$staged/$tool.$shell" || fail 73 "$tool cannot print its $shell completion"
        put 0644 "$staged/$tool.$shell" "$(completion_path "$shell" "$tool")"
    done
done
