#!/usr/bin/env bash
# Our receive pipeline and our memory, measured as a user runs them (part of `make bench-compare`):
#  - `bluejay-compare pipeline COUNT SIZE PERREAD`: H4 bytes handed to our central's transport in
#    reads of PERREAD packets, through HCI, ACL, L2CAP, ATT, GATT and Bluejay's listen to the
#    app's callback on its queue; CPU per notification from getrusage (every thread);
#  - `bluejay-compare memory N`: our central's heap and resident memory per connection, with N
#    connections, each database discovered, then with 10 subscriptions each (the peripherals
#    run in a child process, so only the central is counted).
# Environment: BENCH_PIPELINE_COUNT (200000), BENCH_MEMORY_CONNECTIONS (20); BENCH_WAIT_QUIET and
# BENCH_QUIET_LOAD (wait for a quiet machine first: scripts/bench-quiet.sh).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
count=${BENCH_PIPELINE_COUNT:-200000}

echo "==> swift build -c release --product bluejay-compare (Benchmarks/)"
swift build -c release --package-path Benchmarks --product bluejay-compare 2>&1 | grep -v "^\[" || true
compare="$(swift build -c release --package-path Benchmarks --show-bin-path)/bluejay-compare"
[[ -x "$compare" ]] || { echo "error: $compare was not built" >&2; exit 1; }

source scripts/bench-quiet.sh
wait_for_quiet_machine
echo "==> machine: $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg) before the runs"
for shape in "20 32" "20 4" "20 1" "244 8"; do
    # shellcheck disable=SC2086
    "$compare" pipeline "$count" $shape
done
"$compare" memory "${BENCH_MEMORY_CONNECTIONS:-20}"
echo "==> load average $(cut -d' ' -f1-3 /proc/loadavg) after the runs"
