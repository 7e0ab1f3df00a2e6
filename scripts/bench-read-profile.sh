#!/usr/bin/env bash
# Where a Bluejay read's time goes, end to end on the rig (Benchmarks/README.md, "Where a read's
# time goes"): for each Bluejay API, the allocations (a uprobe on glibc's malloc), context
# switches and CPU per sequential read, and the system calls per read (strace -c).
#
# Each figure is per read, from the difference between a run of FEW and a run of MANY reads
# (so that start, connection and discovery cancel out). The profilers cost CPU themselves:
# compare these figures with each other, not with the CPU of an unprofiled run.
#
# Needs root (perf probe), perf and strace. Environment: BENCH_PROFILE_FEW (1000),
# BENCH_PROFILE_MANY (3000), BENCH_PROFILE_OUT (Benchmarks/.build/read-profile), and the
# rig's own (BENCH_RIG_APIS, BENCH_WAIT_QUIET, ...).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
few=${BENCH_PROFILE_FEW:-1000}
many=${BENCH_PROFILE_MANY:-3000}
out=${BENCH_PROFILE_OUT:-Benchmarks/.build/read-profile}
mkdir -p "$out"
rm -f "$out"/*.stat "$out"/*.strace

libc=$(ldconfig -p | sed -n 's/.*libc\.so\.6 (libc6,x86-64) => //p' | head -1)
[[ -n $libc ]] || { echo "error: glibc's libc.so.6 not found" >&2; exit 1; }
if ! perf probe -l 2>/dev/null | grep -q "probe_libc:malloc"; then
    perf probe -q -x "$libc" malloc
fi

# rig LABEL READS WRAP: the rig with only the read workload, Bluejay's clients under WRAP.
rig() {
    BENCH_RIG_BLUEJAY_WRAP="$3" BENCH_RIG_UNCOALESCED=0 BENCH_RIG_ROUNDS=1 BENCH_RIG_NOTIFY_COUNT=0 \
        BENCH_RIG_NOTIFY_LARGE_COUNT=0 BENCH_RIG_NOTIFY_SLOW_COUNT=0 BENCH_RIG_READ_COUNT="$2" BENCH_RIG_L2CAP_BYTES=0 \
        BENCH_RIG_L2CAP_ECHO_BYTES=0 BENCH_RIG_SCAN_REPORTS=0 BENCH_RIG_OUT="$out/rig-$1-$2" \
        bash scripts/bench-rig.sh > "$out/rig-$1-$2.log" 2>&1 || { tail -20 "$out/rig-$1-$2.log" >&2; exit 1; }
}

for reads in "$few" "$many"; do
    echo "==> $reads reads under perf stat"
    rig stat "$reads" "perf stat -e probe_libc:malloc,context-switches,task-clock -x, -o $out/stat-$reads-{name}.stat"
    echo "==> $reads reads under strace -c"
    rig strace "$reads" "strace -f -c -o $out/strace-$reads-{name}.strace"
done

python3 - "$out" "$few" "$many" <<'EOF'
import glob, os, re, sys
out, few, many = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def stat(path):
    values = {}
    for line in open(path):
        parts = line.strip().split(',')
        if len(parts) > 3 and parts[0][:1].isdigit():
            values[parts[2]] = float(parts[0])
    return values

def strace(path):
    calls = {}
    for line in open(path):
        fields = line.split()
        if len(fields) >= 5 and fields[0][:1].isdigit() and fields[-1] != 'total':
            calls[fields[-1]] = int(fields[3])
    return calls

print(f'Per sequential read (difference of {many} and {few} reads; under the profilers):')
print()
print('| client | mallocs | context switches | task-clock µs | futex | poll | read | sendto | other syscalls |')
print('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
for path in sorted(glob.glob(os.path.join(out, f'stat-{many}-*.stat'))):
    name = re.sub(rf'^stat-{many}-round-1-', '', os.path.basename(path))[:-len('.stat')]
    a, b = stat(path.replace(f'stat-{many}-', f'stat-{few}-')), stat(path)
    per = {k: (b[k] - a.get(k, 0)) / (many - few) for k in b}
    s_few = strace(os.path.join(out, f'strace-{few}-round-1-{name}.strace'))
    s_many = strace(os.path.join(out, f'strace-{many}-round-1-{name}.strace'))
    calls = {k: (s_many.get(k, 0) - s_few.get(k, 0)) / (many - few) for k in set(s_many) | set(s_few)}
    other = sum(v for k, v in calls.items() if k not in ('futex', 'poll', 'read', 'sendto'))
    print(f"| {name} | {per.get('probe_libc:malloc', 0):.1f} | {per.get('context-switches', 0):.2f} "
          f"| {per.get('task-clock', 0) * 1000:.1f} | {calls.get('futex', 0):.2f} | {calls.get('poll', 0):.2f} "
          f"| {calls.get('read', 0):.2f} | {calls.get('sendto', 0):.2f} | {other:.2f} |")
EOF
