#!/bin/bash
# Build the guest's base initramfs: busybox-static, /init (scripts/guest-init.sh),
# qgpu.ko with the kernel modules it needs, our tools and in-VM tests and the
# shared libraries they load.
#
# Module dependencies are resolved, never hand-listed: the extracted guest
# kernel's modules plus qgpu.ko are staged (as symlinks) into a staging root,
# `depmod -b` writes modules.dep there, and modules.dep is followed
# transitively from qgpu.ko. /init insmods them in dependency order. Debian
# ships its modules compressed (.ko.xz); busybox insmod wants them plain, so
# the ones picked are unpacked into the image as .ko (and depmod run there
# again, so the image's modules.dep names what it holds).
#
# The image is cached in $BUILD/guest keyed by every input, so it is rebuilt
# only when the module, a tool/test, this script or /init changes.
# Output: $BUILD/guest/initramfs.cpio.gz (a symlink to the keyed image).
#
# Environment:
#   QGPU_EXTRA_MODULES  more kernel modules to include and load (names, e.g. vgem)
#   QGPU_OPTIONAL_MODULES  modules included but loaded only on demand (`modprobe
#                       NAME` in the guest); default: vgem virtio_gpu (PRIME
#                       tests, the virtio-gpu side of `make igt`). Out-of-tree
#                       modules the project builds ($BUILD/kmod/*.ko, e.g.
#                       sw_sync) are always included this way.
#   QGPU_GUEST_KERNEL_DIR  the guest kernel's tree (vmlinuz, lib/modules/$KVER);
#                       default $QGPU_CACHE/kernel-$KVER (Debian's build); the
#                       debug kernel's is scripts/debug-kernel.sh's directory
#   QGPU_KO             qgpu.ko to include (default kernel/qgpu.ko)
#   QGPU_KMOD_DIR       out-of-tree modules to include (default $BUILD/kmod)
#   QGPU_IMAGE_DIR      where the image goes (default $BUILD/guest)
. "$(dirname "$0")/common.sh"

kdir=${QGPU_GUEST_KERNEL_DIR:-$QGPU_CACHE/kernel-$KVER}
kmods=$kdir/lib/modules/$KVER
[ -e "$kdir/.done" ] || die "guest kernel missing: run scripts/guest-kernel.sh"
busybox=$(command -v busybox) || die "busybox-static not installed"
if ldd "$busybox" > /dev/null 2>&1; then die "$busybox is not static (install busybox-static)"; fi

ko=${QGPU_KO:-$QGPU_ROOT/kernel/qgpu.ko}
tools=()
tests=()
for f in "$BUILD"/bin/*; do [ -f "$f" ] && [ -x "$f" ] && tools+=("$f"); done
for f in "$BUILD"/tests/vm/*; do [ -f "$f" ] && [ -x "$f" ] && tests+=("$f"); done
extra_mods=${QGPU_EXTRA_MODULES:-}
opt_mods=${QGPU_OPTIONAL_MODULES-vgem virtio_gpu}
ext_kos=()
for f in "${QGPU_KMOD_DIR:-$BUILD/kmod}"/*.ko; do [ -f "$f" ] && ext_kos+=("$f"); done

out=${QGPU_IMAGE_DIR:-$BUILD/guest}
mkdir -p "$out"

# Cache key: everything that ends up in the image.
key=$( {
	echo "$KVER $extra_mods / $opt_mods / $kdir"
	sha256sum "$0" "$QGPU_ROOT/scripts/guest-init.sh" "$busybox"
	if [ ${#ext_kos[@]} -gt 0 ]; then sha256sum "${ext_kos[@]}"; fi
	if [ -e "$ko" ]; then sha256sum "$ko"; fi
	if [ ${#tools[@]} -gt 0 ]; then sha256sum "${tools[@]}"; fi
	if [ ${#tests[@]} -gt 0 ]; then sha256sum "${tests[@]}"; fi
} | sed "s|$QGPU_ROOT/||" | sha256sum | cut -c1-16)
img=$out/initramfs-$key.cpio.gz
if [ -e "$img" ]; then
	ln -sfn "$(basename "$img")" "$out/initramfs.cpio.gz"
	log "guest image up to date: $out/initramfs.cpio.gz"
	exit 0
fi

log "building guest image $img"
tmp=$(mktemp -d "$out/tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,usr/local/tests,lib,lib64} \
	"$root"/{proc,sys,dev,run,tmp,root,etc/qgpu,mnt}

# busybox and its applet links
cp "$busybox" "$root/bin/busybox"
while read -r applet; do
	[ -e "$root/$applet" ] || ln -s /bin/busybox "$root/$applet"
done < <("$busybox" --list-full)
cp "$QGPU_ROOT/scripts/guest-init.sh" "$root/init"
chmod 755 "$root/init"
cat > "$root/etc/profile" <<'EOF'
export PATH=/usr/local/bin:/usr/local/tests:/usr/bin:/usr/sbin:/bin:/sbin
export PS1='qgpu:\w# '
EOF
# the kernel this image is for (tests/vm/qgpu_platform checks it runs)
echo "$KVER" > "$root/etc/qgpu/kernel-release"
echo 'root:x:0:0:root:/root:/bin/sh' > "$root/etc/passwd"
echo 'root:x:0:' > "$root/etc/group"

# Kernel modules: stage, depmod, follow modules.dep.
stage=$tmp/stage
smods=$stage/lib/modules/$KVER
mkdir -p "$smods"
cp -rs "$kmods/." "$smods/"
rm -f "$smods"/modules.dep* "$smods"/modules.alias* "$smods"/modules.symbols*
wanted=()
if [ -e "$ko" ]; then
	mkdir -p "$smods/extra"
	cp "$ko" "$smods/extra/qgpu.ko"
	wanted+=(extra/qgpu.ko)
else
	log "warning: kernel/qgpu.ko not built: the image has no qgpu module"
fi
for f in "${ext_kos[@]}"; do
	mkdir -p "$smods/extra"
	cp "$f" "$smods/extra/"
	opt_mods="$opt_mods $(basename "$f" .ko)"
done
depmod -b "$stage" "$KVER" || die "depmod failed"
# module name -> its path in modules.dep
mod_path() {
	awk -F: -v n="$1" '{ b = $1; sub(/.*\//, "", b); sub(/\.ko(\.xz)?$/, "", b);
		gsub(/-/, "_", b); nn = n; gsub(/-/, "_", nn); if (b == nn) { print $1; exit } }' \
		"$smods/modules.dep"
}
for m in $extra_mods; do
	p=$(mod_path "$m")
	[ -n "$p" ] || die "QGPU_EXTRA_MODULES: no module named $m"
	wanted+=("$p")
done
optional=()
for m in $opt_mods; do
	p=$(mod_path "$m")
	[ -n "$p" ] || die "QGPU_OPTIONAL_MODULES: no module named $m"
	optional+=("$p")
done
# Depth-first over modules.dep: every module after all of its dependencies.
load_order() {
	awk -v want="$*" '
	{ name = $1; sub(/:$/, "", name); deps[name] = ""
	  for (i = 2; i <= NF; i++) deps[name] = deps[name] " " $i }
	function visit(m,   d, n, i) {
		if (m in seen) return
		if (!(m in deps)) { print "missing " m > "/dev/stderr"; bad = 1; return }
		seen[m] = 1
		n = split(deps[m], d, " ")
		for (i = 1; i <= n; i++) visit(d[i])
		print m
	}
	END { n = split(want, w, " "); for (i = 1; i <= n; i++) visit(w[i]); exit bad }
	' "$smods/modules.dep"
}
order=$(load_order "${wanted[@]}") || die "unresolved module dependency"
all=$(load_order "${wanted[@]}" "${optional[@]}") || die "unresolved module dependency"

mkdir -p "$root/lib/modules/$KVER"
: > "$root/etc/qgpu/modules"
for m in $all; do
	case $m in
	*.ko) ko=$m ;;
	*.ko.xz) ko=${m%.xz} ;;
	*) die "unsupported module file: $m" ;;
	esac
	mkdir -p "$root/lib/modules/$KVER/$(dirname "$m")"
	if [ "$ko" = "$m" ]; then
		cp -L "$smods/$m" "$root/lib/modules/$KVER/$ko"
	else
		xz -dc "$smods/$m" > "$root/lib/modules/$KVER/$ko" || die "could not unpack $m"
	fi
	if echo "$order" | grep -qxF "$m"; then echo "$ko" >> "$root/etc/qgpu/modules"; fi
done
cp "$kmods/modules.builtin" "$kmods/modules.builtin.modinfo" "$kmods/modules.order" \
	"$root/lib/modules/$KVER/"
depmod -b "$root" "$KVER" || die "depmod (image) failed"
[ -z "$order" ] || log "modules (load order): $(echo "$order" | sed 's|.*/||; s|\.ko\(\.xz\)\?$||' | tr '\n' ' ')"
[ -z "$opt_mods" ] || log "modules on demand (modprobe): $opt_mods"

# Tools, tests and their shared libraries (found with ldd).
for f in "${tools[@]}"; do cp "$f" "$root/usr/local/bin/"; done
for f in "${tests[@]}"; do cp "$f" "$root/usr/local/tests/"; done
libs=$(for f in "${tools[@]}" "${tests[@]}"; do ldd "$f" 2>/dev/null; done |
	awk '/=> \// { print $3 } /^[ \t]*\// { print $1 }' | sort -u)
for l in $libs; do
	mkdir -p "$root$(dirname "$l")"
	cp -L "$l" "$root$l"
done

(cd "$root" && find . -mindepth 1 | LC_ALL=C sort |
	cpio -o -H newc -R 0:0 --quiet) | gzip -1 > "$tmp/img.cpio.gz"
mv "$tmp/img.cpio.gz" "$img"
ln -sfn "$(basename "$img")" "$out/initramfs.cpio.gz"
# Keep only the current image.
find "$out" -maxdepth 1 -name 'initramfs-*.cpio.gz' ! -name "$(basename "$img")" -delete
log "guest image ready: $out/initramfs.cpio.gz ($(du -h "$img" | cut -f1))"
