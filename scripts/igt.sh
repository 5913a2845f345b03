#!/bin/bash
# Run the user's IGT build against qgpu and virtio-gpu, side by side:
# scripts/igt.sh --igt-dir DIR [--tests "NAME ..."] (see scripts/igt.py,
# the implementation, and README section IGT). `make igt IGT_DIR=DIR` runs it.
exec python3 "$(dirname "$0")/igt.py" "$@"
