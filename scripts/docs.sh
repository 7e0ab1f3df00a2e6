#!/usr/bin/env bash
# `make docs`: DocC documentation for every public library module, with swift-docc-plugin.
# Any DocC warning fails the run (--warnings-as-errors); each module's documentation coverage
# is printed (--experimental-documentation-coverage, brief). The archives land in
# .build/plugins/Swift-DocC/outputs/MODULE.doccarchive (`swift package --disable-sandbox
# preview-documentation --target Bluejay` serves one locally).
# DOCS_TARGETS="Bluejay BluetoothHost" builds only those.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
targets=${DOCS_TARGETS:-"BluetoothCore BluetoothTransport BluetoothHCI BluetoothHost BluetoothVirtual GATTProfiles BluetoothPeripheral BluetoothSimulator Bluejay DBus"}
log=$(mktemp "${TMPDIR:-/tmp}/bluejay-docs.XXXXXX")
trap 'rm -f "$log"' EXIT

failed=()
for target in $targets; do
    if swift package --disable-sandbox generate-documentation --target "$target" --warnings-as-errors \
        --experimental-documentation-coverage --coverage-summary-level brief > "$log" 2>&1; then
        echo "==> $target: no warnings"
        # The coverage table: its header and the Types/Members/Globals rows.
        grep -E "^ +\| Abstract|^(Types|Members|Globals) " "$log" | sed 's/^/    /'
    else
        echo "==> $target: DocC reported problems" >&2
        grep -v -E "^\[[0-9]+/[0-9]+\]" "$log" | grep -v -E "^(Building for|Build of|Extracting|Finished)" >&2 || true
        failed+=("$target")
    fi
done
if (( ${#failed[@]} > 0 )); then
    echo "error: DocC warnings in ${failed[*]}" >&2
    exit 1
fi
echo "==> documentation built for: $targets"
