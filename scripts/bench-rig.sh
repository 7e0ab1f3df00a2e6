#!/usr/bin/env bash
# End to end, side by side: Bluejay's central (Benchmarks' bluejay-rig-bench) and Bumble's
# central (Benchmarks/rig/bumble_central.py) run the same workloads against the same Bumble
# peripheral on Bumble's virtual radio (Benchmarks/rig/radio.py), and each measures its own
# CPU time per item with getrusage. See Benchmarks/rig/radio.py for the radio's protocol.
#  1. makes .venv with the pinned Bumble (as `make venv`) if needed;
#  2. builds bluejay-rig-bench in release mode;
#  3. starts radio.py (one process: the link, the peer "Bench Peer", a fresh controller per client);
#  4. waits for a quiet machine if asked (BENCH_WAIT_QUIET, scripts/bench-quiet.sh);
#  5. for each round: Bluejay's client written with each API (`async`, and the callbacks of the
#     seed READMEs), each again with receive coalescing off (to show what the coalescing gives
#     and costs), then Bumble's, each on a fresh controller; the clients' requests to the radio
#     (stream, advertisers, stats) are relayed here, line by line;
#  6. prints the markdown tables (Benchmarks/rig/summarize_rig.py): medians over the rounds, the
#     median per-round ratio Bumble ÷ Bluejay, latencies, and every stream's check.
# Every client checks every notification of every stream (sequence number and send time in
# each, put there by the radio, which also counts what it really delivered): a value lost,
# duplicated, out of order or unexpected fails the client, and so the run (exit 1), after the
# checks are printed.
# Workloads: notifications of 20 bytes and of 244 bytes (ATT MTU 517) as fast as the radio goes,
# and of 20 bytes at a slow pace (one every BENCH_RIG_NOTIFY_SLOW_INTERVAL_MS), with latency
# percentiles; sequential reads of a 20-byte value (with latency percentiles); bytes written on
# an L2CAP LE credit-based channel (to a sink, and to an echo read back; `async` clients only:
# a channel's reads and writes have no callback API); a scan with duplicates among K advertisers.
# Environment (defaults): BENCH_RIG_ROUNDS (3), BENCH_RIG_NOTIFY_COUNT (5000, 20 B),
# BENCH_RIG_NOTIFY_LARGE_COUNT (2000, 244 B), BENCH_RIG_NOTIFY_SLOW_COUNT (300, 20 B),
# BENCH_RIG_NOTIFY_SLOW_INTERVAL_MS (10), BENCH_RIG_READ_COUNT (1000),
# BENCH_RIG_L2CAP_BYTES (204800, to the sink), BENCH_RIG_L2CAP_ECHO_BYTES (204800, echoed),
# BENCH_RIG_SCAN_REPORTS (5000), BENCH_RIG_ADVERTISERS (50), BENCH_RIG_ADV_INTERVAL_MS (20),
# BENCH_RIG_OUT (Benchmarks/.build/rig), BENCH_RIG_TIMEOUT (seconds to wait for a line, 120),
# BENCH_RIG_APIS ("async callbacks": Bluejay's clients, in this order),
# BENCH_RIG_UNCOALESCED (1: also run each with receive coalescing off; 0: skip them),
# BENCH_RIG_COALESCING_MS (Bluejay's receive-coalescing window in ms; unset: the host's default),
# BENCH_WAIT_QUIET and BENCH_QUIET_LOAD (scripts/bench-quiet.sh),
# BENCH_RIG_BLUEJAY_WRAP (a command put before Bluejay's clients, for profiling; {name} becomes
# the client's name, e.g. 'strace -f -c -o /tmp/{name}.strace' or 'perf record -o /tmp/{name}.data':
# what it costs counts in the client's CPU, so such a run's figures are for comparing only).
# A count of 0 skips that workload. Quick run: BENCH_RIG_ROUNDS=1 BENCH_RIG_NOTIFY_COUNT=200
# BENCH_RIG_NOTIFY_LARGE_COUNT=100 BENCH_RIG_NOTIFY_SLOW_COUNT=50 BENCH_RIG_READ_COUNT=50
# BENCH_RIG_L2CAP_BYTES=20480 BENCH_RIG_L2CAP_ECHO_BYTES=20480 BENCH_RIG_SCAN_REPORTS=200
# bash scripts/bench-rig.sh
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
rounds=${BENCH_RIG_ROUNDS:-3}
uncoalesced=${BENCH_RIG_UNCOALESCED:-1}
read -r -a apis <<< "${BENCH_RIG_APIS:-async callbacks}"
for api in "${apis[@]}"; do
    [[ $api == async || $api == callbacks ]] || { echo "error: BENCH_RIG_APIS: async or callbacks, not $api" >&2; exit 2; }
done
out=${BENCH_RIG_OUT:-Benchmarks/.build/rig}
timeout=${BENCH_RIG_TIMEOUT:-120}
workload_args=(
    --notify-small "${BENCH_RIG_NOTIFY_COUNT:-5000}"
    --notify-large "${BENCH_RIG_NOTIFY_LARGE_COUNT:-2000}"
    --notify-slow "${BENCH_RIG_NOTIFY_SLOW_COUNT:-300}"
    --notify-slow-interval-ms "${BENCH_RIG_NOTIFY_SLOW_INTERVAL_MS:-10}"
    --reads "${BENCH_RIG_READ_COUNT:-1000}"
    --l2cap-bytes "${BENCH_RIG_L2CAP_BYTES:-204800}"
    --l2cap-echo-bytes "${BENCH_RIG_L2CAP_ECHO_BYTES:-204800}"
    --scan-reports "${BENCH_RIG_SCAN_REPORTS:-5000}"
    --advertisers "${BENCH_RIG_ADVERTISERS:-50}"
    --adv-interval-ms "${BENCH_RIG_ADV_INTERVAL_MS:-20}"
)
# A channel's reads and writes have only an `async` API: the callback clients skip them.
no_channels=(--l2cap-bytes 0 --l2cap-echo-bytes 0)

bash scripts/test.sh --venv-only
python=.venv/bin/python

echo "==> swift build -c release --product bluejay-rig-bench (Benchmarks/)"
if ! build_log=$(swift build -c release --package-path Benchmarks --product bluejay-rig-bench 2>&1); then
    echo "$build_log" >&2
    echo "error: the build failed" >&2
    exit 1
fi
grep -v "^\[" <<< "$build_log" || true
bench="$(swift build -c release --package-path Benchmarks --show-bin-path)/bluejay-rig-bench"
[[ -x "$bench" ]] || { echo "error: $bench was not built" >&2; exit 1; }

mkdir -p "$out"
results="$out/results.jsonl"
rm -f "$results" "$out"/*.log "$out/results.md"
fifos=$(mktemp -d "${TMPDIR:-/tmp}/bench-rig.XXXXXX")
radio_pid="" client_pid=""
cleanup() {
    for pid in $client_pid $radio_pid; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$fifos"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 141' PIPE  # a client that died while we answered it

# read_line FD WHAT: one line from FD into $line, or fail after $timeout seconds or at its end.
read_line() {
    if ! IFS= read -r -t "$timeout" -u "$1" line; then
        echo "error: no line from $2 (timed out or ended; logs in $out)" >&2
        exit 1
    fi
}

# The radio: stdin and stdout on FIFOs, one reply line per command line.
mkfifo "$fifos/radio.in" "$fifos/radio.out"
"$python" Benchmarks/rig/radio.py < "$fifos/radio.in" > "$fifos/radio.out" 2> "$out/radio.log" &
radio_pid=$!
exec {radio_in}> "$fifos/radio.in" {radio_out}< "$fifos/radio.out"
read_line "$radio_out" "radio.py (ready)"
peer=$(sed -n 's/.*"peer_address": *"\([0-9A-F:]*\)".*/\1/p' <<< "$line")/random

# run_client ROUND STACK COMMAND...: runs one client on a fresh controller (COMMAND, then --port,
# --peer, the workload options and the array client_extra, whose options win), relays its radio
# commands, and collects its results (with the load average as it started).
run_client() {
    local round=$1 stack=$2 name="round-$1-$2" port status
    shift 2
    printf '{"cmd": "new_slot"}\n' >&"$radio_in"
    read_line "$radio_out" "radio.py (new_slot)"
    port=$(sed -n 's/.*"port": *\([0-9]*\).*/\1/p' <<< "$line")
    load=$(cut -d' ' -f1 /proc/loadavg)
    echo "==> round $round of $rounds: $stack (controller on port $port; load $load)"

    mkfifo "$fifos/$name.in" "$fifos/$name.out"
    "$@" --port "$port" --peer "$peer" "${workload_args[@]}" "${client_extra[@]}" \
        < "$fifos/$name.in" > "$fifos/$name.out" 2> "$out/$name.log" &
    client_pid=$!
    exec {client_in}> "$fifos/$name.in" {client_out}< "$fifos/$name.out"
    while true; do
        IFS= read -r -t "$timeout" -u "$client_out" line || { status=$?; break; }
        case $line in
            *'"cmd"'*)
                printf '%s\n' "$line" >&"$radio_in"
                read_line "$radio_out" "radio.py (answering $stack: $line)"
                printf '%s\n' "$line" >&"$client_in" ;;
            *'"workload"'*)
                echo "    $line"
                printf '{"round": %d, "stack": "%s", "load": %s, "result": %s}\n' "$round" "$stack" "$load" "$line" >> "$results" ;;
            *)
                echo "    ($stack) $line" >&2 ;;
        esac
    done
    exec {client_in}>&- {client_out}<&-
    if (( status > 128 )); then
        echo "error: $stack's client was silent for ${timeout}s (log: $out/$name.log)" >&2
        exit 1
    fi
    if ! wait "$client_pid"; then
        client_pid=""
        echo "error: $stack's client failed (log: $out/$name.log):" >&2
        tail -20 "$out/$name.log" >&2
        summarize || true
        exit 1
    fi
    client_pid=""
}

# wrap NAME: BENCH_RIG_BLUEJAY_WRAP with {name} replaced by NAME (split into words by the caller).
wrap() {
    local command=${BENCH_RIG_BLUEJAY_WRAP:-}
    printf '%s' "${command//\{name\}/$1}"
}

# summarize: the tables of what was measured so far; fails when a stream check failed.
summarize() {
    echo
    "$python" Benchmarks/rig/summarize_rig.py "$results" | tee "$out/results.md"
    return "${PIPESTATUS[0]}"
}

source scripts/bench-quiet.sh
wait_for_quiet_machine
echo "==> machine: $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg) before the runs"
for round in $(seq 1 "$rounds"); do
    for api in "${apis[@]}"; do
        client_extra=(--api "$api")
        if [[ -n ${BENCH_RIG_COALESCING_MS:-} ]]; then client_extra+=(--coalescing-ms "$BENCH_RIG_COALESCING_MS"); fi
        if [[ $api == callbacks ]]; then client_extra+=("${no_channels[@]}"); fi
        run_client "$round" "bluejay-$api" $(wrap "round-$round-bluejay-$api") "$bench"
        if [[ $uncoalesced == 1 ]]; then
            client_extra+=(--coalescing-ms 0)
            run_client "$round" "bluejay-$api-nocoalescing" $(wrap "round-$round-bluejay-$api-nocoalescing") "$bench"
        fi
    done
    client_extra=()
    run_client "$round" bumble "$python" Benchmarks/rig/bumble_central.py
done
echo "==> load average $(cut -d' ' -f1-3 /proc/loadavg) after the runs"
printf '{"cmd": "quit"}\n' >&"$radio_in"
read_line "$radio_out" "radio.py (quit)"
status=0
summarize || status=$?
echo
echo "Markdown tables: $out/results.md (raw results: $results, logs: $out/*.log)"
exit "$status"
