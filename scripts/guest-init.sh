#!/bin/sh
# /init of the qgpu guest initramfs (busybox sh). Built into the image by
# scripts/build-initramfs.sh; driven by scripts/run-vm.sh through a second cpio
# archive appended to the initramfs that holds:
#   /run/config  shell variables: QGPU_MODE (run|shell), QGPU_LOAD (1|0),
#                QGPU_MODPARAMS (qgpu.ko parameters), QGPU_MODPROBE (modules
#                modprobed after those, e.g. on-demand ones: "virtio_gpu")
#   /run/cmds    one command per line: "TIMEOUT_SECONDS COMMAND LINE..."
# The host parses these console markers (kernel-side copies go to /dev/kmsg
# so the kernel log can be split per command):
#   @@RUN-READY@@  @@RUN-BEGIN n@@  @@RUN-TIMEOUT n@@  @@RUN-END n rc=R@@
#   @@LOAD-FAILED module rc=R@@  @@DMESG-BEGIN@@ ... @@DMESG-END@@  @@RUN-DONE@@
export PATH=/usr/local/bin:/usr/local/tests:/usr/bin:/usr/sbin:/bin:/sbin
export HOME=/root TERM=${TERM:-linux}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm /tmp /run /root
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug
ln -sf /proc/self/fd /dev/fd 2>/dev/null
hostname qgpu-guest

QGPU_MODE=shell
QGPU_LOAD=1
QGPU_MODPARAMS=
QGPU_MODPROBE=
[ -f /run/config ] && . /run/config

kmsg() { echo "$*" > /dev/kmsg; }

if [ "$QGPU_LOAD" = 1 ] && [ -s /etc/qgpu/modules ]; then
	while read -r m; do
		params=
		case $m in */qgpu.ko) params=$QGPU_MODPARAMS ;; esac
		# shellcheck disable=SC2086
		insmod "/lib/modules/$(uname -r)/$m" $params
		rc=$?
		[ $rc = 0 ] || echo "@@LOAD-FAILED $m rc=$rc@@"
	done < /etc/qgpu/modules
fi
for m in $QGPU_MODPROBE; do
	modprobe "$m"
	rc=$?
	[ $rc = 0 ] || echo "@@LOAD-FAILED $m rc=$rc@@"
done
mkdir -p /dev/dri

if [ "$QGPU_MODE" = shell ]; then
	echo "qgpu guest shell: tools in /usr/local/bin, tests in /usr/local/tests."
	echo "Leave with 'exit' or Ctrl-D (powers the VM off)."
	setsid cttyhack sh -l
	poweroff -f
fi

echo "@@RUN-READY@@"
n=0
while IFS= read -r line <&3; do
	case $line in '' | '#'*) continue ;; esac
	n=$((n + 1))
	t=${line%% *}
	cmd=${line#* }
	kmsg "@@KMSG-BEGIN $n@@"
	echo "@@RUN-BEGIN $n@@"
	# Own session and process group, so a timeout kills the whole tree.
	setsid sh -c "$cmd" < /dev/null &
	pid=$!
	(
		sleep "$t" &
		s=$!
		trap 'kill $s 2>/dev/null; exit 0' TERM
		wait $s
		echo "@@RUN-TIMEOUT $n@@"
		kill -TERM -- -$pid 2>/dev/null
		sleep 5
		kill -KILL -- -$pid 2>/dev/null
	) &
	wd=$!
	wait $pid
	rc=$?
	kill $wd 2>/dev/null
	wait $wd 2>/dev/null
	echo "@@RUN-END $n rc=$rc@@"
	kmsg "@@KMSG-END $n rc=$rc@@"
done 3< /run/cmds

echo "@@DMESG-BEGIN@@"
dmesg
echo "@@DMESG-END@@"
echo "@@RUN-DONE@@"
sync
poweroff -f
