#!/bin/bash
# `make bench` (README "Benchmarks"): scripts/bench.py under Debian's python3,
# whose python3-matplotlib draws the plot, whatever python3 comes first on PATH.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
exec "$py" "$(dirname "$0")/bench.py" "$@"
