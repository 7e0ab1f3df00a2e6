# `make` or `make test`: the one test command (scripts/test.sh): venv, build without warnings, all tests.
.DEFAULT_GOAL := test
.PHONY: test stress-test soak fuzz fuzz-smoke venv rig-selftest bench bench-compare install install-check docs

test:
	bash scripts/test.sh

# The test command with one core kept busy, as on a loaded CI machine; STRESS_RUNS=5 for five runs.
stress-test:
	bash scripts/stress-test.sh

# The soak run (bluejay-soak): centrals and peripherals on the in-process virtual radio doing
# thousands of mixed operations under random faults for SOAK_MINUTES (default 3), then a report
# and a verdict on its invariants (exit status 1 when one fails, 2 on a hang). SOAK_SEED=N
# replays a run's choices. Builds in debug, as `make test` does (reuses its build).
SOAK_MINUTES ?= 3
export SOAK_MINUTES
soak:
	swift build --product bluejay-soak
	"$$(swift build --show-bin-path)/bluejay-soak"

# Only the Python venv with the pinned Bumble and Rootcanal of the interop tests (.venv).
venv:
	bash scripts/test.sh --venv-only

# Checks the Bumble peer on its own, with a Bumble host in place of Bluejay (a few seconds).
rig-selftest: venv
	.venv/bin/python Tests/InteropTests/bumble/selftest.py

# libFuzzer targets (Fuzz/, a package of their own, built in .build-fuzz): each runs
# FUZZ_SECONDS (default 60) from its seeds in Fuzz/Corpus/; crashes go to .build-fuzz/artifacts/.
# FUZZ_TARGETS="FuzzHCIEvent FuzzStrings" runs only those. See scripts/fuzz.sh.
fuzz:
	bash scripts/fuzz.sh $(FUZZ_TARGETS)

# Every fuzz target for a few seconds (FUZZ_SMOKE_SECONDS, default 3), as `make test` runs them.
fuzz-smoke:
	bash scripts/fuzz.sh --smoke $(FUZZ_TARGETS)

# Benchmarks live in Benchmarks/, a package of their own that `make test` never builds.
# The ordo-one benchmarks (throughput, wall clock, mallocs per item); see Benchmarks/README.md.
bench:
	cd Benchmarks && swift package benchmark

# Bluejay and Bumble side by side: first on the same bytes in memory, then end to end on
# Bumble's virtual radio (notifications, reads, scanning), interleaved rounds, median ratios;
# then our in-memory pipeline and memory per connection (bluejay-compare pipeline / memory).
bench-compare:
	bash scripts/bench-compare.sh
	bash scripts/bench-rig.sh
	bash scripts/bench-pipeline.sh

# A release build of `bluejay` with the Swift runtime linked in (--static-swift-stdlib), so it
# runs where Swift is not installed, as PREFIX/bin/bluejay (PREFIX defaults to /usr/local;
# DESTDIR stages it), with bash, zsh and fish completions under PREFIX/share.
PREFIX ?= /usr/local
export PREFIX
install:
	bash scripts/install.sh "$(PREFIX)"

# Installs into a temporary PREFIX and runs the installed `bluejay demo` from an empty
# environment (env -i) with no Swift on the PATH. A release build of several minutes, so not
# part of `make test`.
install-check:
	bash scripts/install-check.sh

# DocC for every library module with swift-docc-plugin: fails on any DocC warning, prints each
# module's documentation coverage. About 3 minutes, so not part of `make test`.
docs:
	bash scripts/docs.sh
