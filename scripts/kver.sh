#!/bin/bash
# Print the guest kernel release in use: the Makefile's KVER, or the build
# set-up chose in its place (see scripts/common.sh).
. "$(dirname "$0")/common.sh"
echo "$KVER"
