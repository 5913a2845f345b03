#!/bin/bash
# Run qgpu's test suites and total them: tests/run-tests.sh [-t PATTERN] [SUITE...]
# (suites: unit checkpatch qtest vm). `make test` runs this after `make setup`.
# The last line is "N passed, N failed"; exit status 1 on any failure.
exec python3 "$(dirname "$0")/harness.py" "$@"
