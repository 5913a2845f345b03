#!/bin/bash
# Run only the vm suite: tests/run-vm-tests.sh [-t PATTERN] (see tests/harness.py).
exec python3 "$(dirname "$0")/harness.py" "$@" vm
