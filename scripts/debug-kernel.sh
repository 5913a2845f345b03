#!/bin/bash
# Build the debug guest kernel (KASAN, lockdep, debug objects, kmemleak, fault
# injection; see scripts/debug-kernel.config) from Debian's linux-source
# package of the guest kernel's version, with the same release string as the
# stock guest kernel ($KVER), so the module build, the image and
# tests/vm/qgpu_platform treat it the same way.
#   scripts/debug-kernel.sh          build it unless cached; print its directory
#   scripts/debug-kernel.sh --dir    only print the directory it would use
# Result, cached outside the checkout and keyed by every input (source package
# version, the config fragment, the build recipe below, the compiler):
#   $QGPU_CACHE/kernel-debug-$KVER-KEY/
#     vmlinuz                 bzImage
#     lib/modules/$KVER/      modules_install output (plain .ko)
#     src/                    the configured and built tree: KDIR for qgpu.ko
#     build.log               the build's output
#     .done                   written last
# Build deps (compiler, libelf-dev, libssl-dev, bc, ...) come from
# scripts/host-deps.sh --debug-kernel. The build runs at nice 19 with one job
# per CPU; it took 38 minutes on 2 cores busy with other work. An interrupted
# build resumes where it stopped. Changing the fragment rebuilds nearly
# everything (most options reach headers every file includes).
. "$(dirname "$0")/common.sh"

frag=$QGPU_ROOT/scripts/debug-kernel.config
pkg=linux-source-$KSERIES
ver=$(cat "$QGPU_CACHE/headers-$KVER/version" 2>/dev/null) ||
	die "no headers for $KVER in $QGPU_CACHE: run scripts/host-deps.sh"
# What makes the kernel what it is: the source, the fragment, the compiler
# and how it is configured and built (RECIPE: bump it when a change to this
# script changes the result; messages and comments do not, and must not
# cost a 40-minute rebuild).
RECIPE=1
key=$( {
	echo "$KVER $pkg $ver recipe $RECIPE"
	sha256sum < "$frag"
	gcc --version 2>/dev/null | head -n 1 || true
} | sha256sum | cut -c1-12)
dest=$QGPU_CACHE/kernel-debug-$KVER-$key

if [ "${1:-}" = --dir ]; then
	echo "$dest"
	exit 0
fi
if [ -e "$dest/.done" ]; then
	echo "$dest"
	exit 0
fi

"$QGPU_ROOT/scripts/host-deps.sh" --debug-kernel
# The source .deb is the one checkpatch.sh fetches (same version as the headers).
"$QGPU_ROOT/scripts/checkpatch.sh" --fetch
deb=$QGPU_CACHE/debs/${pkg}_${ver}_all.deb
[ -e "$deb" ] || die "$deb missing after checkpatch.sh --fetch"

mkdir -p "$dest"
exec 9> "$dest/.lock"
flock -n 9 || { log "another debug kernel build holds $dest/.lock; waiting"; flock 9; }
if [ -e "$dest/.done" ]; then
	echo "$dest"
	exit 0
fi
src=$dest/src
if [ ! -e "$src/.extracted" ]; then
	rm -rf "$src"
	mkdir -p "$src"
	log "extracting $(basename "$deb")"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO --wildcards "*/$pkg.tar.xz" |
		tar -xJ -C "$src" --strip-components=1 ||
		die "could not extract $pkg.tar.xz from $deb"
	touch "$src/.extracted"
fi

cd "$src"
kmake() { nice -n 19 make -s "$@"; }
base=$(kmake kernelversion)
case $KVER in
"$base"*) localver=${KVER#"$base"} ;;
*) die "$pkg $ver is kernel $base, which cannot make release $KVER" ;;
esac

if [ ! -e .configured ]; then
	log "configuring: x86_64 defconfig + $(basename "$frag")"
	kmake defconfig > /dev/null
	scripts/kconfig/merge_config.sh -m .config "$frag" > /dev/null ||
		die "merge_config.sh failed"
	scripts/config --set-str LOCALVERSION "$localver"
	kmake olddefconfig > /dev/null
	# Every line of the fragment must hold in the result.
	bad=0
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*) sym=${line%%=*}; want=$line ;;
		"# CONFIG_"*" is not set") sym=${line#\# }; sym=${sym%% *}; want= ;;
		*) continue ;;
		esac
		got=$(grep -E "^$sym=" .config || true)
		if [ "$got" != "$want" ]; then
			log "config: wanted '${want:-# $sym is not set}', got '${got:-# $sym is not set}'"
			bad=1
		fi
	done < "$frag"
	[ $bad = 0 ] || die "the configuration does not hold $(basename "$frag") (see above)"
	touch .configured
fi
kmake syncconfig   # (kernelrelease reads include/config/auto.conf)
rel=$(kmake kernelrelease)
[ "$rel" = "$KVER" ] || die "kernel release is '$rel', wanted '$KVER'"

jobs=$(nproc)
log "building debug kernel $KVER in $src ($jobs jobs, nice 19; about 40 min on 2 busy cores; log: $dest/build.log)"
start=$SECONDS
nice -n 19 make -j"$jobs" bzImage modules > "$dest/build.log" 2>&1 &
mpid=$!
# A progress line a minute: how many files have been compiled so far.
while kill -0 "$mpid" 2>/dev/null; do
	for _ in $(seq 60); do
		kill -0 "$mpid" 2>/dev/null || break
		sleep 1
	done
	kill -0 "$mpid" 2>/dev/null || break
	log "debug kernel: $(grep -c '^  CC ' "$dest/build.log") files compiled, $(( (SECONDS - start) / 60 )) min"
done
wait "$mpid" || { tail -n 30 "$dest/build.log" >&2; die "debug kernel build failed (log: $dest/build.log)"; }

log "installing modules into $dest/lib/modules/$KVER"
rm -rf "$dest/lib"
kmake INSTALL_MOD_PATH="$dest" INSTALL_MOD_STRIP=1 modules_install >> "$dest/build.log" 2>&1 ||
	die "modules_install failed (log: $dest/build.log)"
cp arch/x86/boot/bzImage "$dest/vmlinuz"
touch "$dest/.done"
log "debug kernel ready: $dest ($(( (SECONDS - start) / 60 )) min)"
echo "$dest"
