#!/bin/bash
# Run only the qtest suite: tests/run-qtest.sh [-t PATTERN] (see tests/harness.py).
exec python3 "$(dirname "$0")/harness.py" "$@" qtest
