#!/usr/bin/env bash
# The project's one test command, run by `make test` and by CI (.ci/run):
#  1. makes .venv (Python with the pinned Bumble and Rootcanal of Tests/InteropTests/bumble/requirements.txt)
#     when it is missing, broken, or older than requirements.txt;
#  2. checks the DocC symbol links of the public API (scripts/doc-links.py, a second; `make docs`
#     is the full DocC check, minutes long, so not run here), then builds everything with the
#     tests and fails on any compiler warning in Sources/ or Tests/;
#  3. installs tshark, dbus-daemon, dbus-send and gdbus (Debian's packages) when missing, for the
#     capture test and the D-Bus tests, and builds the Linux guest of the HCI user channel tests
#     (scripts/linux-guest.sh: Debian's kernel and a bookworm root under QEMU, cached in
#     .build/guest; a few minutes the first time, beside the Swift build), then runs every test,
#     unit and interop (the interop tests start the Bumble peer from .venv, the D-Bus tests
#     private dbus-daemons, the guest tests boot the guest once);
#  4. runs the soak (bluejay-soak, `make soak`) for 8 seconds, so that it cannot rot;
#  5. runs every fuzz target a few seconds (`make fuzz-smoke`, scripts/fuzz.sh --smoke), so that
#     the fuzz harness (Fuzz/, built in .build-fuzz) keeps building and its seeds keep passing.
# Each step's line starts with the seconds since the start ([N s]).
# `scripts/test.sh --venv-only` does step 1 only (`make venv`).
#
# Note: an incremental build only shows the warnings of the files it recompiles; CI builds
# from a fresh clone, so it sees them all.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
requirements=Tests/InteropTests/bumble/requirements.txt
venv=.venv
stamp=$venv/.requirements.sha256

wanted=$(sha256sum "$requirements" | cut -d' ' -f1)
installed=$(cat "$stamp" 2>/dev/null || true)
if [[ ! -x $venv/bin/python || "$wanted" != "$installed" ]] || ! "$venv/bin/python" -c 'import bumble' 2>/dev/null; then
    echo "==> [${SECONDS} s] creating $venv with $(python3 --version) and $requirements"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$requirements"
    echo "$wanted" > "$stamp"
fi
export BLUEJAY_PYTHON="$root/$venv/bin/python"
echo "==> [${SECONDS} s] Bumble peer: $("$BLUEJAY_PYTHON" -c 'import bumble, sys; print("bumble", bumble.__version__ if hasattr(bumble, "__version__") else "?", "on Python", sys.version.split()[0])')"

if [[ "${1:-}" == "--venv-only" ]]; then
    exit 0
fi

# install_debian_package PACKAGE COMMAND WHY: installs Debian's PACKAGE when COMMAND is missing
# (root or passwordless sudo, and apt-get); otherwise warns that the tests needing it are skipped.
install_debian_package() {
    local package=$1 command=$2 why=$3
    command -v "$command" > /dev/null && return 0
    echo "==> [${SECONDS} s] installing $package (Debian package) for $why"
    local sudo_cmd=()
    if [[ $(id -u) -ne 0 ]] && command -v sudo > /dev/null; then sudo_cmd=(sudo -n); fi
    if command -v apt-get > /dev/null \
        && { "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$package" > /dev/null 2>&1 \
             || { "${sudo_cmd[@]}" apt-get update -q > /dev/null 2>&1 \
                  && "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$package" > /dev/null 2>&1; }; } \
        && command -v "$command" > /dev/null; then
        echo "==> $command: $(command -v "$command")"
    else
        echo "warning: cannot install $package (needs root or passwordless sudo, and apt-get): $why will be skipped" >&2
    fi
}

# tshark (Wireshark's command line) decodes the btsnoop captures of the CLI tests
# (InteropTests/CLICaptureTests).
install_debian_package tshark tshark "the tshark capture test"
# dbus-daemon runs the private buses of the D-Bus tests (Tests/DBusTests/Daemon); dbus-send
# (dbus-bin) and gdbus (libglib2.0-bin) are the third-party peers of DBusThirdPartyTests.
install_debian_package dbus-daemon dbus-daemon "the D-Bus tests against dbus-daemon"
install_debian_package dbus-bin dbus-send "the D-Bus tests with dbus-send"
install_debian_package libglib2.0-bin gdbus "the D-Bus tests with gdbus"

build_log=$(mktemp "${TMPDIR:-/tmp}/bluejay-build.XXXXXX")
soak_log=$(mktemp "${TMPDIR:-/tmp}/bluejay-soak.XXXXXX")
guest_log=$(mktemp "${TMPDIR:-/tmp}/bluejay-guest.XXXXXX")
test_log=$(mktemp "${TMPDIR:-/tmp}/bluejay-test.XXXXXX")
guest_pid=""
# On an early exit the guest build is waited for, not killed (it caches for the next run).
trap '[[ -n $guest_pid ]] && wait "$guest_pid"; rm -f "$build_log" "$soak_log" "$guest_log" "$test_log"' EXIT

# The Linux guest (docs/LINUX-GUEST.md) is built while Swift builds: mostly downloads and
# debootstrap, cached in .build/guest after the first time. It needs root or passwordless sudo
# (apt-get, debootstrap); without, its tests are skipped and say so.
if [[ $(id -u) -eq 0 ]] || { command -v sudo > /dev/null && sudo -n true 2> /dev/null; }; then
    echo "==> [${SECONDS} s] Linux guest (scripts/linux-guest.sh build), beside the Swift build"
    bash scripts/linux-guest.sh build > "$guest_log" 2>&1 &
    guest_pid=$!
else
    echo "warning: building the Linux guest needs root or passwordless sudo: the HCI user channel tests will be skipped" >&2
fi

echo "==> [${SECONDS} s] DocC symbol links (scripts/doc-links.py)"
python3 scripts/doc-links.py

echo "==> [${SECONDS} s] swift build --build-tests"
if ! swift build --build-tests 2>&1 | tee "$build_log"; then
    echo "error: the build failed" >&2
    exit 1
fi

# Warnings in this repository's own code (not in .build/checkouts) fail the run.
warnings=$(grep -E "^($root/)?(Sources|Tests)/[^:]+:[0-9]+:[0-9]+: warning:" "$build_log" | sort -u || true)
if [[ -n "$warnings" ]]; then
    echo "error: the build has warnings in Sources/ or Tests/ (the project builds without any):" >&2
    echo "$warnings" >&2
    exit 1
fi

if [[ -n $guest_pid ]]; then
    if ! wait "$guest_pid"; then
        guest_pid=""
        cat "$guest_log" >&2
        echo "error: the Linux guest could not be built (scripts/linux-guest.sh build, log above)" >&2
        exit 1
    fi
    guest_pid=""
    grep "^==>" "$guest_log" || true
    echo "==> [${SECONDS} s] Linux guest: $(tail -1 "$guest_log") (kernel $(sed -n 's/^kernel //p' "$(tail -1 "$guest_log")/manifest.txt"))"
    # Built: the guest tests must run, not skip.
    export BLUEJAY_GUEST_REQUIRED=1
fi

# At most 8 tests run at once (Swift Testing's SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH;
# without it every one of the run's ~1,700 tests starts at once). On two slow cores that burst
# starved tests of the first minute past their hang guards (docs/TESTING.md); with 8 the unit
# suites take as long as before, and each test gets its share of the machine. An experimental
# setting: a toolchain without it ignores the variable.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-8}
echo "==> [${SECONDS} s] swift test (at most $SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH tests at once)"
# A failure is summed up at the very end (CI shows only the output's tail): each issue's first
# line, the test that failed, and any error of swift test itself.
status=0
swift test 2>&1 | tee "$test_log" || status=$?
if [[ $status -ne 0 ]]; then
    echo "==> [${SECONDS} s] swift test failed (exit $status); its issues (full text above):" >&2
    grep -E "^(✘ Test .*(recorded an issue|failed after)|error: |Fatal error|.*Exited with)" "$test_log" \
        | grep -vE "^✘ Test run with" | cut -c1-400 | head -n 16 >&2 || true
    grep -E "^✘ Test run with" "$test_log" >&2 || echo "swift test ended before its summary (a crash?); its last lines are above" >&2
    exit "$status"
fi

echo "==> [${SECONDS} s] bluejay-soak for 8 s (make soak runs it for SOAK_MINUTES)"
if ! "$(swift build --show-bin-path)/bluejay-soak" --seconds 8 > "$soak_log" 2>&1; then
    cat "$soak_log"
    echo "error: the soak smoke run failed (SOAK_SEED above replays its choices)" >&2
    exit 1
fi
grep -E "^(operations|faults injected|notifications|result)" "$soak_log"

echo "==> [${SECONDS} s] fuzz smoke (scripts/fuzz.sh --smoke)"
bash scripts/fuzz.sh --smoke
echo "==> [${SECONDS} s] all passed"
