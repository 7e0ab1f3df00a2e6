#!/usr/bin/env bash
# Side-by-side comparison of Bluejay and Bumble (Google's Python stack, the reference of the
# interop tests) on the same operations and the same bytes (`make bench-compare`):
#  1. makes .venv with the pinned Bumble (as `make venv`) if needed;
#  2. builds Benchmarks/'s bluejay-compare in release mode;
#  3. writes the shared corpus (bluejay-compare generate) that both sides read;
#  4. runs Bluejay, then Bumble, then Bluejay, then Bumble… for BENCH_ROUNDS rounds;
#  5. prints the medians and the median per-round ratio (Benchmarks/compare/summarize.py),
#     failing if the two sides' check strings differ for an operation.
# Environment: BENCH_ROUNDS (default 5), BENCH_SECONDS per operation and run (default 0.3),
# BENCH_ONLY (comma-separated operation names), BENCH_OUT (default Benchmarks/.build/compare),
# BENCH_WAIT_QUIET and BENCH_QUIET_LOAD (wait for a quiet machine first: scripts/bench-quiet.sh).
# Ratios are only meaningful within one run: the machines are noisy.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
rounds=${BENCH_ROUNDS:-5}
seconds=${BENCH_SECONDS:-0.3}
out=${BENCH_OUT:-Benchmarks/.build/compare}
only=()
if [[ -n "${BENCH_ONLY:-}" ]]; then only=(--only "$BENCH_ONLY"); fi

bash scripts/test.sh --venv-only
python=.venv/bin/python

echo "==> swift build -c release --product bluejay-compare (Benchmarks/)"
swift build -c release --package-path Benchmarks --product bluejay-compare 2>&1 | grep -v "^\[" || true
compare="$(swift build -c release --package-path Benchmarks --show-bin-path)/bluejay-compare"
[[ -x "$compare" ]] || { echo "error: $compare was not built" >&2; exit 1; }

mkdir -p "$out"
rm -rf "$out/corpus" "$out"/round-*-bluejay.json "$out"/round-*-bumble.json "$out"/results.md "$out"/results.json
"$compare" generate "$out/corpus"

# Other builds on the machine skew both sides, though interleaving evens that out.
source scripts/bench-quiet.sh
wait_for_quiet_machine
echo "==> machine: $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg) before the runs"
for round in $(seq 1 "$rounds"); do
    echo "==> round $round of $rounds (load $(cut -d' ' -f1 /proc/loadavg)): Bluejay"
    "$compare" run "$out/corpus" --seconds "$seconds" "${only[@]}" > "$out/round-$round-bluejay.json"
    echo "==> round $round of $rounds: Bumble"
    "$python" Benchmarks/compare/bumble_bench.py "$out/corpus" --seconds "$seconds" "${only[@]}" > "$out/round-$round-bumble.json"
done
echo "==> load average $(cut -d' ' -f1-3 /proc/loadavg) after the runs"
echo
"$python" Benchmarks/compare/summarize.py "$out"
echo
echo "Markdown table: $out/results.md"
