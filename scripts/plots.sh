#!/bin/bash
# `make plots TRACE=...` and `make run`: tools/replay/plots.py under Debian's
# python3, whose python3-matplotlib draws the plots, whatever python3 comes
# first on PATH. Arguments: those of plots.py.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
exec "$py" "$(dirname "$0")/../tools/replay/plots.py" "$@"
