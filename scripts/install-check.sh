#!/usr/bin/env bash
# `make install-check`: installs into a temporary PREFIX (scripts/install.sh, a release build)
# and checks that the installed binary stands alone: it links no Swift library, and from an
# empty environment (`env -i`, a PATH without Swift) it prints its version and runs
# `bluejay demo` to the end on the in-process virtual radio. The completions must be there.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
prefix=$(mktemp -d "${TMPDIR:-/tmp}/bluejay-install.XXXXXX")
trap 'rm -rf "$prefix"' EXIT

bash scripts/install.sh "$prefix"
binary="$prefix/bin/bluejay"

if ldd "$binary" | grep -i swift; then
    echo "error: $binary links Swift libraries dynamically (above); it needs --static-swift-stdlib" >&2
    exit 1
fi
clean_path=/usr/bin:/bin
if env -i PATH="$clean_path" sh -c 'command -v swift' > /dev/null; then
    echo "error: swift is on $clean_path, so this check cannot show that the binary runs without it" >&2
    exit 1
fi
for file in share/bash-completion/completions/bluejay share/zsh/site-functions/_bluejay share/fish/vendor_completions.d/bluejay.fish; do
    grep -q "demo" "$prefix/$file" || { echo "error: $prefix/$file does not complete the demo command" >&2; exit 1; }
done

version=$(env -i PATH="$clean_path" "$binary" --version)
echo "==> env -i bluejay --version: $version"
output=$(env -i PATH="$clean_path" "$binary" demo --seconds 1 2>&1) || { echo "$output"; echo "error: bluejay demo failed from an empty environment" >&2; exit 1; }
echo "$output" | tail -6
grep -q "disconnected" <<< "$output" || { echo "error: the demo did not run to its end" >&2; exit 1; }
echo "==> install-check passed: $binary ran demo with env -i and no Swift on the PATH"
