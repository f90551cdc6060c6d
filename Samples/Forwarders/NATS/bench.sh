#!/usr/bin/env bash
# Records per second into a local JetStream through `host-drain --exec forward-nats`, a
# process a batch and with --long-running (one forwarder for the whole drain), against
# the floor: the same payloads published by the C client alone (Floor/), with the same
# Nats-Msg-Id headers and asynchronous acknowledgements. Each round drains a
# fresh queue into a fresh stream; the figures are the medians of the rounds, and the
# ratio is what to quote, since absolute rates on a shared machine drift.
# Usage: bash Samples/Forwarders/NATS/bench.sh [RECORDS [BATCH [ROUNDS]]]   (default 100000 10000 3)
# share-stress bench --only forwarding measures the same at host-drain's default batch.
set -euo pipefail
records=${1:-100000}
batch=${2:-10000}
rounds=${3:-3}
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
export PATH="/opt/swift/usr/bin:$PATH"

for tool in nats-server pkg-config cc; do
    command -v $tool > /dev/null || { echo "bench.sh: $tool is missing (apt-get install nats-server libnats-dev pkg-config gcc)" >&2; exit 69; }
done
(cd "$root" && swift build -c release --product host-drain >&2 && swift build -c release --product share-append >&2)
(cd "$here" && swift build -c release --product forward-nats >&2 && swift build -c release --product nats-stream-dump >&2)
bin="$(cd "$root" && swift build -c release --show-bin-path)"
forwarder="$(cd "$here" && swift build -c release --show-bin-path)"
scratch="$(mktemp -d -t forward-nats-bench.XXXXXX)"
server=""
trap '[ -n "$server" ] && kill "$server" && wait "$server"; rm -rf "$scratch"' EXIT
cc -O2 -o "$scratch/publish-floor" "$here/Floor/publish-floor.c" $(pkg-config --cflags --libs libnats)

nats-server -js -a 127.0.0.1 -p -1 -sd "$scratch/store" --ports_file_dir "$scratch" 2> "$scratch/server.log" &
server=$!
for _ in $(seq 500); do ls "$scratch"/*.ports > /dev/null 2>&1 && break; sleep 0.01; done
url="$(grep -o 'nats://[0-9.:]*' "$scratch"/*.ports | head -n 1)"

seq "$records" | sed 's|.*|shared link & https://example.com/articles/&?ref=share|' > "$scratch/lines"
now() { date +%s%N; }
median() { sort -n | sed -n "$(( ($1 + 1) / 2 ))p"; }
count() { "$forwarder/nats-stream-dump" --server "$url" --stream "$1" --count; }
floors=()
drains=()
longs=()
for round in $(seq "$rounds"); do
    queue="$scratch/queue-$round"
    "$bin/share-append" --dir "$queue" --lines --no-sync -q < "$scratch/lines"
    "$bin/host-drain" --dir "$queue" --peek > "$scratch/payloads"
    "$forwarder/forward-nats" --server "$url" --subject "floor.$round" --create-stream "FLOOR$round" < /dev/null
    "$forwarder/forward-nats" --server "$url" --subject "drain.$round" --create-stream "DRAIN$round" < /dev/null
    "$forwarder/forward-nats" --server "$url" --subject "long.$round" --create-stream "LONG$round" < /dev/null
    cp -R "$queue" "$queue-long"

    start=$(now)
    "$scratch/publish-floor" "$url" "floor.$round" "$scratch/payloads" > /dev/null
    floors+=($(( $(now) - start )))
    start=$(now)
    "$bin/host-drain" --dir "$queue" -q --batch "$batch" --exec "'$forwarder/forward-nats' --server $url --subject drain.$round"
    drains+=($(( $(now) - start )))
    start=$(now)
    "$bin/host-drain" --dir "$queue-long" -q --batch "$batch" --long-running --exec "'$forwarder/forward-nats' --server $url --subject long.$round"
    longs+=($(( $(now) - start )))
    [ "$(count "FLOOR$round")" = "$records" ] && [ "$(count "DRAIN$round")" = "$records" ] && [ "$(count "LONG$round")" = "$records" ] || {
        echo "bench.sh: a stream does not hold $records messages" >&2; exit 70; }
done
floor=$(printf '%s\n' "${floors[@]}" | median "$rounds")
drain=$(printf '%s\n' "${drains[@]}" | median "$rounds")
long=$(printf '%s\n' "${longs[@]}" | median "$rounds")
rate() { echo $(( records * 1000000000 / $1 )); }
echo "records: $records, host-drain --batch $batch, median of $rounds rounds"
echo "C client alone (floor):          $(rate "$floor") records/s"
echo "host-drain --exec forward-nats:  $(rate "$drain") records/s"
echo "host-drain --long-running:       $(rate "$long") records/s"
awk -v f="$floor" -v d="$drain" 'BEGIN { printf "ratio to the floor:              %.2f\n", f / d }'
awk -v f="$floor" -v d="$long" 'BEGIN { printf "ratio, --long-running:           %.2f\n", f / d }'
