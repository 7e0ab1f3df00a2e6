# `make` or `make test`: the one test command (scripts/test.sh): venv, build without warnings, all tests.
.DEFAULT_GOAL := test
.PHONY: test venv rig-selftest

test:
	bash scripts/test.sh

# Only the Python venv with the pinned Bumble of the interop tests (.venv).
venv:
	bash scripts/test.sh --venv-only

# Checks the Bumble peer on its own, with a Bumble host in place of Bluejay (a few seconds).
rig-selftest: venv
	.venv/bin/python Tests/InteropTests/bumble/selftest.py
