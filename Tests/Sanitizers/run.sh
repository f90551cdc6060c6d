#!/usr/bin/env bash
# Builds the package and its tests with a sanitizer, and runs the tests with every
# tool they spawn built the same way:
#
#   Tests/Sanitizers/run.sh address            # every test, under AddressSanitizer
#   Tests/Sanitizers/run.sh thread             # the concurrent suites, under ThreadSanitizer
#   Tests/Sanitizers/run.sh thread --filter X  # options after the name go to swift test
#
# Each sanitizer builds in a scratch folder of its own (.build/asan, .build/tsan):
# the debug build in .build, which the power-cut explorer runs, is left as it is.
#
# Every report, from the test process or from any process it starts (as any
# user), is written to a file in one fresh folder, and the run fails if that
# folder is not empty at the end, whatever the tests said: a test that expects a
# tool to fail could take a tool stopped by a report for the failure it expected,
# and a tool started with its standard error sent to /dev/null would hide it.
# A process that reports also exits with 86, a status no tool gives.
set -euo pipefail
cd "$(dirname "$0")/../.."

sanitizer="${1:-}"
shift || true
case "$sanitizer" in
    address) scratch=.build/asan ;;
    thread) scratch=.build/tsan ;;
    *) echo "usage: Tests/Sanitizers/run.sh address|thread [swift test options]" >&2; exit 64 ;;
esac

# Outside the checkout, and open to all: the tests run the tools as users of
# their own, and those must read the suppressions and write their reports.
work=$(mktemp -d "${TMPDIR:-/tmp}/sharequeue-$sanitizer-XXXXXX")
chmod 755 "$work"
mkdir -m 1777 "$work/reports"
cp Tests/Sanitizers/*.supp "$work/"
chmod 644 "$work"/*.supp

# The sanitizers' own defaults, but for where reports go and the status they
# exit with (AddressSanitizer's is 1, which the stress tool gives for a finding;
# ThreadSanitizer's is 66, EX_NOINPUT). Options already set come first, so a
# developer's own are kept unless they name the same option.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$work/reports/asan:exitcode=86:detect_leaks=1"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$work/leaks.supp:print_suppressions=0"
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}log_path=$work/reports/tsan:exitcode=86:suppressions=$work/races.supp:print_suppressions=0"

# What ThreadSanitizer runs unless told otherwise: every suite whose tests, or
# whose tools, run on more than one thread or in more than one process at once.
concurrent="ConcurrencyTests|ReadAheadTests|ReadAheadDrainTests|AsyncTests|ContentRouterTests|WatchTests|ChangeNoticeTests|StressTests|LockWaitTests|StoppedLockHolderTests|AppSideEffectTests"
arguments=("$@")
if [ "$sanitizer" = thread ] && ! printf '%s\n' "$@" | grep -q -- '^--filter'; then
    arguments+=(--filter "$concurrent")
fi

common=(--traits TestHooks --sanitize="$sanitizer" --scratch-path "$scratch")
started=$(date +%s)
swift build --build-tests "${common[@]}"
built=$(date +%s)
status=0
swift test --skip-build "${common[@]}" "${arguments[@]}" || status=$?
finished=$(date +%s)
echo "sanitizer $sanitizer: built in $((built - started)) s, tested in $((finished - built)) s"

reports=("$work"/reports/*)
if [ -e "${reports[0]}" ]; then
    echo "sanitizer $sanitizer: ${#reports[@]} report(s), from these processes:" >&2
    for report in "${reports[@]}"; do
        echo "--- $report" >&2
        cat "$report" >&2
    done
    exit 1
fi
rm -rf "$work"
exit "$status"
