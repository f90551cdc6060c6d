#!/bin/sh
# Builds one fuzz target with libFuzzer and AddressSanitizer and runs it over
# its kept corpus. Usage: Tests/Fuzz/run.sh [target|all] [seconds]
#   targets: segment record checkpoint bookkeeping names (default: all)
#   seconds: how long each target runs (default 60)
# Exits non-zero on a finding; the input that found it is left in
# .build/fuzz/findings/<target>/. New inputs that add coverage go to
# .build/fuzz/new/<target>/; fold them into the kept corpus with:
#   Tests/Fuzz/run.sh merge <target>
set -eu
cd "$(dirname "$0")/../.."

targets="segment record checkpoint bookkeeping names"
file_of() {
    case "$1" in
        segment) echo SegmentReaderFuzz.swift ;;
        record) echo RecordFuzz.swift ;;
        checkpoint) echo CheckpointFuzz.swift ;;
        bookkeeping) echo BookkeepingFuzz.swift ;;
        names) echo SegmentNameFuzz.swift ;;
        *) echo "unknown target: $1 (one of: $targets)" >&2; exit 64 ;;
    esac
}

build() {
    mkdir -p .build/fuzz/modules
    # The system layer as a module of its own, as in the package (with the
    # header-only C module it imports, found by -I); then the
    # library's sources (with CChecksum, found the same way) and the target as one module, so the target reaches
    # the library's internal entry points. The linker warns about every
    # sanitizer symbol it cannot export: shown only on failure.
    if ! { swiftc -sanitize=fuzzer,address -parse-as-library -O -wmo \
            -module-name ShareQueueSystem -package-name ShareQueue -I Sources/CLinuxSystem \
            -emit-module -emit-module-path .build/fuzz/modules/ShareQueueSystem.swiftmodule \
            -emit-object -o .build/fuzz/ShareQueueSystem.o Sources/ShareQueueSystem/*.swift &&
        swiftc -sanitize=fuzzer,address -parse-as-library -O \
            -module-name ShareQueueCore -package-name ShareQueue -I .build/fuzz/modules -I Sources/CLinuxSystem -I Sources/CChecksum \
            $(find Sources/ShareQueueCore -name '*.swift') .build/fuzz/ShareQueueSystem.o \
            Tests/Fuzz/FuzzSupport.swift "Tests/Fuzz/$(file_of "$1")" \
            -o ".build/fuzz/$1"; } >".build/fuzz/$1.build.log" 2>&1; then
        cat ".build/fuzz/$1.build.log" >&2
        exit 70
    fi
}

# Bounds on every input: a planted length must not buy memory.
limits="-rss_limit_mb=256 -malloc_limit_mb=128 -timeout=10"

# ASan keeps 256 MB of freed memory by default, which alone passes the RSS limit.
export ASAN_OPTIONS="${ASAN_OPTIONS:-quarantine_size_mb=32}"

scratch=$(mktemp -d "$( [ -d /dev/shm ] && echo /dev/shm || echo "${TMPDIR:-/tmp}" )/sharequeue-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM
export SHAREQUEUE_FUZZ_DIR="$scratch"

if [ "${1:-}" = merge ]; then
    target=${2:?usage: run.sh merge <target>}
    build "$target"
    mkdir -p "$scratch/merged" ".build/fuzz/new/$target"
    ".build/fuzz/$target" -merge=1 $limits "$scratch/merged" "Tests/Fuzz/corpus/$target" ".build/fuzz/new/$target"
    rm -rf "Tests/Fuzz/corpus/$target" && mv "$scratch/merged" "Tests/Fuzz/corpus/$target"
    exit 0
fi

selected=${1:-all}
seconds=${2:-60}
[ "$selected" = all ] && selected=$targets
status=0
for target in $selected; do
    build "$target"
    mkdir -p ".build/fuzz/new/$target" ".build/fuzz/findings/$target"
    echo "== $target: ${seconds}s"
    # The kept corpus is read only: new inputs go to .build, listed first.
    if ! ".build/fuzz/$target" -max_total_time="$seconds" $limits -print_final_stats=1 \
        -artifact_prefix=".build/fuzz/findings/$target/" \
        ".build/fuzz/new/$target" "Tests/Fuzz/corpus/$target"; then
        echo "== $target: FINDING, see .build/fuzz/findings/$target/" >&2
        status=1
    fi
done
exit $status
