# Sourced by the benchmark scripts (bench-compare.sh, bench-rig.sh, bench-pipeline.sh): waits for
# a quiet machine before anything is measured.
#
# BENCH_WAIT_QUIET=SECONDS: wait up to that long for the 1-minute load average to fall below
# BENCH_QUIET_LOAD (default 1.0); if it has not by then, stop with exit status 3 rather than
# measure on a busy machine. Unset (the default): measure at once, whatever the load (the
# scripts print the load average before and after, and with each round).
# Call it after the build, which loads the machine itself: the 1-minute average takes about a
# minute to forget a busy spell.
wait_for_quiet_machine() {
    [[ -n "${BENCH_WAIT_QUIET:-}" ]] || return 0
    local limit=${BENCH_QUIET_LOAD:-1.0}
    if ! [[ $BENCH_WAIT_QUIET =~ ^[0-9]+$ ]]; then
        echo "error: BENCH_WAIT_QUIET is a number of seconds, not \"$BENCH_WAIT_QUIET\"" >&2
        exit 2
    fi
    if ! [[ $limit =~ ^[0-9]+([.][0-9]+)?$ ]]; then
        echo "error: BENCH_QUIET_LOAD is a load average such as 1.0, not \"$limit\"" >&2
        exit 2
    fi
    local deadline=$((SECONDS + BENCH_WAIT_QUIET))
    echo "==> waiting up to ${BENCH_WAIT_QUIET} s for the 1-minute load average to fall below $limit (now $(cut -d' ' -f1-3 /proc/loadavg))"
    while awk -v limit="$limit" '{ exit !($1 >= limit) }' /proc/loadavg; do
        if (( SECONDS >= deadline )); then
            echo "error: the load average is still $(cut -d' ' -f1-3 /proc/loadavg) after ${BENCH_WAIT_QUIET} s: not measuring on a busy machine" >&2
            echo "       (wait longer, raise BENCH_QUIET_LOAD, or unset BENCH_WAIT_QUIET to measure anyway)" >&2
            exit 3
        fi
        sleep 5
    done
    echo "==> quiet enough: load average $(cut -d' ' -f1-3 /proc/loadavg)"
}
