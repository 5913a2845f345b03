#!/bin/bash
# Run only the checkpatch suite: tests/run-checkpatch.sh [-t PATTERN] (see tests/harness.py).
exec python3 "$(dirname "$0")/harness.py" "$@" checkpatch
