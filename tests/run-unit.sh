#!/bin/bash
# Run only the unit suite: tests/run-unit.sh [-t PATTERN] (see tests/harness.py).
exec python3 "$(dirname "$0")/harness.py" "$@" unit
