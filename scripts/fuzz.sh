#!/usr/bin/env bash
# Fuzzing with libFuzzer (Fuzz/, a package of its own): builds every target with
# -sanitize=fuzzer,address in .build-fuzz, then runs each in turn.
#
#   scripts/fuzz.sh [TARGET...]          `make fuzz`: FUZZ_SECONDS per target (default 60)
#   scripts/fuzz.sh --smoke [TARGET...]  `make fuzz-smoke` (run by scripts/test.sh): replays the
#                                        seeds, then fuzzes FUZZ_SMOKE_SECONDS per target (default 3)
#
# Each target starts from its committed seeds (Fuzz/Corpus/TARGET/, read only; the inputs of
# the crashes it found are there too, as regression-*) and from the corpus earlier runs grew
# (.build-fuzz/corpus/TARGET/, outside git, where new inputs go), with the tokens of
# Fuzz/Dictionaries/TARGET.dict if there is one. The smoke run starts from the seeds alone,
# with a corpus of its own that each run empties. A crash,
# a leak, a hang (-timeout) or a run over the memory limits saves the input in
# .build-fuzz/artifacts/TARGET/, prints how to reproduce it, and fails the run once every
# target has run. Logs: .build-fuzz/logs/TARGET.log.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
scratch=.build-fuzz

smoke=false
if [[ "${1:-}" == "--smoke" ]]; then
    smoke=true
    shift
fi
seconds=${FUZZ_SECONDS:-60}
if $smoke; then seconds=${FUZZ_SMOKE_SECONDS:-3}; fi

all_targets=(FuzzH4Deframer FuzzCaptureRedactor FuzzHCIEvent FuzzHCICommand FuzzACLReassembly FuzzChannelPDUs FuzzCreditChannel FuzzHostChannels
             FuzzGATTClient FuzzGATTServer FuzzAdvertising FuzzStrings FuzzRestoration FuzzPairing FuzzDBusMessage)
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then targets=("${all_targets[@]}"); fi

# The targets that run the stack's tasks: libFuzzer's leak check after each input would take
# the tasks still finishing for leaks and slow the run down five times; LeakSanitizer still
# checks the whole run at exit.
async_targets=" FuzzHostChannels FuzzGATTClient FuzzGATTServer "

echo "==> swift build --package-path Fuzz --scratch-path $scratch (-sanitize=fuzzer,address)"
build_log=$(mktemp "${TMPDIR:-/tmp}/bluejay-fuzz-build.XXXXXX")
trap 'rm -f "$build_log"' EXIT
build_fuzz() {
    swift build --package-path Fuzz --scratch-path "$scratch" -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld > "$build_log" 2>&1
}
# SwiftPM keeps the fuzz package's build plan across builds and does not look again for the
# files of its path dependency (the root package): after a pull that adds, moves or removes a
# source file, the cached plan compiles the old list ("missing inputs", or a type "not in
# scope"). The plan is made again whenever the list of source files differs from the last build's.
sources_stamp="$scratch/sources.list"
sources_now=$(cd "$root" && find Sources Fuzz/Sources -name '*.swift' | LC_ALL=C sort)
if [[ ! -f "$sources_stamp" || "$(cat "$sources_stamp")" != "$sources_now" ]]; then
    rm -f "$scratch"/*.yaml "$scratch"/*/debug/description.json
fi
built=true
build_fuzz || built=false
if $built; then mkdir -p "$scratch" && printf '%s\n' "$sources_now" > "$sources_stamp"; fi
if ! $built; then
    grep -v "Cannot export local symbol" "$build_log" >&2
    echo "error: the fuzz targets do not build" >&2
    exit 1
fi
warnings=$(grep -E "^($root/)?(Fuzz/Sources|Sources)/[^:]+:[0-9]+:[0-9]+: warning:" "$build_log" | sort -u || true)
if [[ -n "$warnings" ]]; then
    echo "error: the fuzz build has warnings:" >&2
    echo "$warnings" >&2
    exit 1
fi

binaries=$(swift build --package-path Fuzz --scratch-path "$scratch" --show-bin-path)
# Foundation's Data(contentsOf:) leaks its buffer for an empty file (FoundationEssentials,
# not Bluejay): the restoration target reads empty files.
export LSAN_OPTIONS="suppressions=$root/Fuzz/lsan-suppressions.txt:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

# A trap is libFuzzer's to report: Swift's own backtracer, under AddressSanitizer, takes long
# and adds noise.
export SWIFT_BACKTRACE=enable=no

failed=()
printf '%-20s %12s %10s %8s  %s\n' target executions "exec/s" "corpus" result
for target in "${targets[@]}"; do
    corpus=$scratch/corpus/$target
    if $smoke; then
        corpus=$scratch/smoke-corpus/$target
        rm -rf "$corpus"
    fi
    artifacts=$scratch/artifacts/$target
    log=$scratch/logs/$target.log
    mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
    leaks=1
    [[ "$async_targets" == *" $target "* ]] && leaks=0
    dictionary=()
    [[ -f Fuzz/Dictionaries/$target.dict ]] && dictionary=(-dict="Fuzz/Dictionaries/$target.dict")
    status=0
    "$binaries/$target" "$corpus" "Fuzz/Corpus/$target" "${dictionary[@]}" \
        -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 -malloc_limit_mb=512 -detect_leaks=$leaks \
        -print_final_stats=1 -artifact_prefix="$artifacts/" > "$log" 2>&1 || status=$?
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    units=$(find "$corpus" -type f | wc -l)
    if [[ $status -eq 0 ]]; then
        printf '%-20s %12s %10s %8s  %s\n' "$target" "${executions:-?}" "${speed:-?}" "$units" ok
    else
        printf '%-20s %12s %10s %8s  %s\n' "$target" "${executions:-?}" "${speed:-?}" "$units" "FAILED (exit $status)"
        failed+=("$target")
        artifact=$(sed -n "s/.*Test unit written to \(.*\)$/\1/p" "$log" | tail -1)
        grep -E "fuzz property violated|Fatal error|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|SUMMARY" "$log" | head -5 | sed 's/^/    /'
        echo "    log: $log"
        if [[ -n "$artifact" ]]; then
            echo "    input: $artifact"
            echo "    reproduce: $binaries/$target $artifact"
        fi
    fi
done

if [[ ${#failed[@]} -gt 0 ]]; then
    echo "error: fuzz targets failed: ${failed[*]}" >&2
    exit 1
fi
