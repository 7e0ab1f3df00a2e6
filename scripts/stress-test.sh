#!/usr/bin/env bash
# The whole test command (scripts/test.sh) with one core kept busy by a busy loop, as on a CI
# machine doing other work (`make stress-test`). STRESS_RUNS=N runs it N times (default 1) and
# prints how many passed and how long each took; the exit status is that of the last failure.
# Every run's output is kept in .build/stress/run-N.log.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=${STRESS_RUNS:-1}
logs=.build/stress
mkdir -p "$logs"

busy=""
stop_busy() { [[ -n "$busy" ]] && kill "$busy" 2>/dev/null; wait "$busy" 2>/dev/null; busy=""; }
trap stop_busy EXIT
# Stopped from outside: the busy loop goes too, and so does this script (a trap alone would
# carry on with the next run).
trap 'stop_busy; exit 143' INT TERM

passed=0
status=0
summary=()
for run in $(seq 1 "$runs"); do
    # One core busy for the whole run: build, venv check and tests.
    bash -c 'while :; do :; done' &
    busy=$!
    start=$SECONDS
    if bash scripts/test.sh > "$logs/run-$run.log" 2>&1; then
        passed=$((passed + 1))
        result=passed
    else
        status=1
        result=FAILED
    fi
    stop_busy
    line="run $run of $runs: $result in $((SECONDS - start)) s ($(grep -E '^. Test run with' "$logs/run-$run.log" | tail -1 | sed 's/\x1b\[[0-9;]*m//g'))"
    summary+=("$line")
    echo "$line"
    if [[ $result == FAILED ]]; then
        grep -E '✘ Test .* (recorded an issue|failed)' "$logs/run-$run.log" | head -20
    fi
done
echo
echo "stress test: $passed of $runs runs passed with one core busy"
for line in "${summary[@]}"; do echo "  $line"; done
exit $status
