#!/usr/bin/env bash
# Builds the tools, then plays the hand-off: four "extensions" append at the
# same time into a fresh queue, then the "host" drains it once and prints what
# was delivered. Usage: bash Samples/demo.sh [--check]
# With --check it only says whether this machine has what the demo needs.
set -euo pipefail
cd "$(dirname "$0")/.."

# What a build needs, said plainly rather than as a compiler error later.
missing=()
command -v swift > /dev/null || missing+=("the Swift toolchain, 6.0 or later, with swift on the PATH")
if [ "$(uname -s)" = Linux ] && ! { [ -e /usr/include/sqlite3.h ] || pkg-config --exists sqlite3 2> /dev/null; }; then
    missing+=("the SQLite headers, for host-drain's store: sudo apt-get install libsqlite3-dev (Debian, Ubuntu)")
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "demo.sh: this machine is missing:" >&2
    printf '  - %s\n' "${missing[@]}" >&2
    exit 69
fi
if [ "${1:-}" = --check ]; then echo "demo.sh: ready"; exit 0; fi

swift build -c release --product share-append >&2
swift build -c release --product host-drain >&2
bin="$(swift build -c release --show-bin-path)"
queue="$(mktemp -d)/queue"
trap 'rm -rf "$(dirname "$queue")"' EXIT

echo "== four producers append at once into $queue"
pids=()
"$bin/share-append" --dir "$queue" --source notes-extension --lines < Samples/shared-notes.txt > /dev/null & pids+=($!)
"$bin/share-append" --dir "$queue" --source settings-widget --json --key wallpaper < Samples/settings.json > /dev/null & pids+=($!)
echo "https://example.com/article?id=42" | "$bin/share-append" --dir "$queue" --source safari-extension --url --meta title="An article" > /dev/null & pids+=($!)
(for i in 1 2 3 4 5; do "$bin/share-append" --dir "$queue" --source keyboard "typed snippet $i" > /dev/null || exit 1; done) & pids+=($!)
for pid in "${pids[@]}"; do wait "$pid"; done

echo "== waiting:"
"$bin/host-drain" --dir "$queue" --status
echo "== the host drains once and delivers:"
"$bin/host-drain" --dir "$queue" --format text
echo "== after the drain:"
"$bin/host-drain" --dir "$queue" --status
