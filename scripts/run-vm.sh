#!/bin/bash
# Boot the qgpu guest under TCG and run commands in it; see `run-vm.sh --help`
# and scripts/vmrun.py (the implementation).
exec python3 "$(dirname "$0")/vmrun.py" "$@"
