#!/bin/bash
# Record the trace suite (traces/, docs/trace-format.md) from real runs in
# the guest: qgpu-demo on `make run`'s device, the qgpu_split test program,
# the qgpu_pressure test program (its group's device and module parameters:
# gdsf, budgets, priorities, offers, migrating back, policy changes), and
# every qgpu-workload on a small device with non-visible VRAM and a host
# aperture. Each is recorded by qgpu-trace, checked in the guest by
# qgpu-replay --check, printed on the console and taken out of the log by
# scripts/vm-fetch.py. Run it again when the memory manager's decisions
# change: tests/unit/replay requires the replay of every trace of the
# suite to be exactly the kernel's.
#
# usage: scripts/record-traces.sh [-o DIR]   (default: traces/)
# Needs `make setup` (or `make module userspace image`) first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/traces
[ "${1:-}" = -o ] && out=$2
mkdir -p "$out"
logs=$root/build/logs/record-traces
rm -rf "$logs"

# record PROPS NAME [-m MODPARAMS] COMMAND...: one boot per device
# configuration
record() {
	local props=$1 dir=$logs/$2 mp=()
	shift 2
	if [ "${1:-}" = -m ]; then
		mp=(-m "$2")
		shift 2
	fi
	local cmds=()
	for spec in "$@"; do
		local name=${spec%%:*} cmd=${spec#*:}
		cmds+=("qgpu-trace record -o /tmp/$name.qtr -- $cmd > /tmp/$name.out 2>&1; tail -2 /tmp/$name.out; qgpu-replay --check /tmp/$name.qtr | grep -E 'check|best='"
		       "qgpu-trace cat /tmp/$name.qtr")
	done
	"$root/scripts/run-vm.sh" -t 1200 -p "$props" "${mp[@]}" --log-dir "$dir" \
		"${cmds[@]}" | grep -v '^@@'
	"$root/scripts/vm-fetch.py" "$dir"/*.log -o "$out"
}

record vram-size=256M,visible-vram-size=64M demo "demo:qgpu-demo"
record vram-size=32M split-test "split-test:qgpu_split"
record vram-size=32M,visible-vram-size=8M pressure -m "policy=gdsf budget=90" \
	"pressure:qgpu_pressure policy=gdsf budget=90"
w=()
for n in split frames training smallhuge multi cpu virtual; do
	w+=("$n:qgpu-workload $n")
done
record vram-size=32M,visible-vram-size=16M,host-aperture-size=8M workloads "${w[@]}"
