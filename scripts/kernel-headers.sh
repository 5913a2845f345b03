#!/bin/bash
# Extract Debian's headers for the guest kernel into the cache, never
# installing them: the headers package depends on a kernel image, and
# installing one would change the host's boot kernel. Three .debs are
# unpacked into one tree, $QGPU_CACHE/headers-$KVER/, where their relative
# links (scripts -> ../../lib/linux-kbuild-*) resolve as they would in /;
# the flavour's Makefile includes the common one by absolute path, which is
# pointed into that tree. The module builds with
#   KDIR=$QGPU_CACHE/headers-$KVER/usr/src/linux-headers-$KVER
# and $QGPU_CACHE/headers-$KVER/version holds the packages' version.
. "$(dirname "$0")/common.sh"

root=$QGPU_CACHE/headers-$KVER
[ -e "$root/.done" ] && exit 0

base=${KVER%-*}			# 6.12.117+deb12-amd64 -> 6.12.117+deb12
pkgs=("linux-headers-$KVER" "linux-headers-$base-common" "linux-kbuild-$base")
mkdir -p "$QGPU_CACHE/debs"
for p in "${pkgs[@]}"; do
	if ! ls "$QGPU_CACHE/debs/${p}_"*.deb >/dev/null 2>&1; then
		(cd "$QGPU_CACHE/debs" &&
		 step "downloading $p" apt-get download -q "$p")
	fi
done
rm -rf "$root.tmp"
mkdir -p "$root.tmp"
for p in "${pkgs[@]}"; do
	step "extracting $p" dpkg-deb -x "$(ls "$QGPU_CACHE/debs/${p}_"*.deb | sort -V | tail -n 1)" "$root.tmp"
done
mk=$root.tmp/usr/src/linux-headers-$KVER/Makefile
[ -e "$mk" ] || die "linux-headers-$KVER has no Makefile"
sed -i "s|^include /usr/src/|include $root/usr/src/|" "$mk"
dpkg-deb -f "$(ls "$QGPU_CACHE/debs/linux-headers-${KVER}_"*.deb | sort -V | tail -n 1)" Version \
	> "$root.tmp/version"
rm -rf "$root"
mv "$root.tmp" "$root"
touch "$root/.done"
log "kernel headers for $KVER at $root"
