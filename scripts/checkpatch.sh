#!/bin/bash
# Run the kernel's checkpatch.pl on kernel/*.c kernel/*.h (and the contract
# headers, the UAPI, kmod/), and the kernel's kernel-doc -none -Wall on the
# UAPI headers (include/uapi/drm/*.h): an undocumented struct member, enum
# value or ioctl struct, or a stale one, is a problem like any other.
#   scripts/checkpatch.sh           check; prints problems, exit 1 if any
#   scripts/checkpatch.sh --fetch   only make sure the tools are cached
#   scripts/checkpatch.sh FILE...   check these files instead
# checkpatch.pl (with spelling.txt and const_structs.checkpatch) and
# kernel-doc are not in the headers package: they come from Debian's
# linux-source-$KSERIES .deb of the same version as the guest kernel's
# headers, downloaded once into $QGPU_CACHE/debs; just the files of TOOLS
# are extracted, into $QGPU_CACHE/checkpatch-VERSION-KEY/ (KEY: a hash of
# that list, so a longer list gets a directory of its own).
. "$(dirname "$0")/common.sh"

# The kernel's style plus the DRM subsystem's (dim runs checkpatch --strict).
# Ignored: only types that cannot apply to files checked out of tree.
IGNORE=FILE_PATH_CHANGES,MODIFIED_INCLUDE_ASM,UNDOCUMENTED_DT_STRING
OPTS=(--no-tree -q --terse --show-types --strict --max-line-length=100
      --ignore "$IGNORE" -f)

# What fetch() extracts from the kernel source: scripts/NAME for each NAME.
TOOLS=(checkpatch.pl spelling.txt const_structs.checkpatch kernel-doc)

fetch() {
	local pkg=linux-source-$KSERIES ver deb dir key t
	local pats=()
	# the version of the guest kernel's headers (scripts/kernel-headers.sh)
	ver=$(cat "$QGPU_CACHE/headers-$KVER/version" 2>/dev/null) ||
		die "no headers for $KVER in $QGPU_CACHE: run scripts/host-deps.sh"
	mkdir -p "$QGPU_CACHE/debs"
	deb=$QGPU_CACHE/debs/${pkg}_${ver}_all.deb
	if [ ! -e "$deb" ]; then
		(cd "$QGPU_CACHE/debs" &&
		 step "downloading $pkg $ver (for checkpatch.pl, ~150 MB, once)" \
			apt-get download -q "$pkg=$ver")
		[ -e "$deb" ] || die "apt-get download did not leave $deb"
	fi
	key=$(printf '%s\n' "${TOOLS[@]}" | sha256sum | cut -c1-8)
	dir=$QGPU_CACHE/checkpatch-$ver-$key
	if [ ! -e "$dir/.done" ]; then
		log "extracting ${TOOLS[*]} from $(basename "$deb")"
		for t in "${TOOLS[@]}"; do pats+=("*/scripts/$t"); done
		rm -rf "$dir.tmp"
		mkdir -p "$dir.tmp"
		# The .deb holds usr/src/$pkg.tar.xz; stream it, keep TOOLS.
		dpkg-deb --fsys-tarfile "$deb" |
			tar -xO --wildcards "*/$pkg.tar.xz" |
			tar -xJ -C "$dir.tmp" --strip-components=2 --wildcards \
				"${pats[@]}" ||
			die "could not extract ${TOOLS[*]} from $deb"
		for t in "${TOOLS[@]}"; do
			[ -e "$dir.tmp/$t" ] || die "scripts/$t not found in $deb"
		done
		rm -rf "$dir"
		mv "$dir.tmp" "$dir"
		touch "$dir/.done"
	fi
	echo "$dir" >&3
}

# (fetch reports on stderr; only the directory goes to stdout)
tools=$(fetch 3>&1 >&2)
cp_pl=$tools/checkpatch.pl
if [ "${1:-}" = --fetch ]; then
	exit 0
fi
# BIT()/BIT_ULL() exist only in kernel headers: files that never reach one
# (the UAPI header, the register contract shared with QEMU, plain-C policy
# code built into host unit tests) are not told to use them.
declare -A seen
reaches_kernel() {
	local f=$1 inc
	[ -z "${seen[$f]:-}" ] || return 1
	seen[$f]=1
	grep -qE '^#include <(linux|drm|asm|media|acpi)/' "$f" && return 0
	for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
		[ -e "$(dirname "$f")/$inc" ] && reaches_kernel "$(dirname "$f")/$inc" && return 0
	done
	return 1
}

# The UAPI's documentation, checked with the kernel's kernel-doc: -Wall
# reports a member, enum value or parameter that a kernel-doc comment leaves
# out or names wrongly. kernel-doc says nothing about a struct or enum with
# no kernel-doc comment at all, nor about #defines, so every struct and enum
# the header defines must have one, and every DRM_IOCTL_* it defines must be
# an item "- %DRM_IOCTL_NAME, &struct ARG:" of its "DOC: ... ioctls"
# section, which must list nothing else. Problems print as FILE:LINE: TEXT.
uapi_doc() {
	local f=$1 doc kind name line ioctl arg
	perl "$tools/kernel-doc" -none -Wall "$f" 2>&1 || true
	doc=$(perl "$tools/kernel-doc" -rst -no-doc-sections "$f" 2>/dev/null) ||
		true
	while IFS=: read -r line kind name; do
		grep -qxF ".. c:type:: $kind $name" <<<"$doc" ||
			echo "$f:$line: $kind $name has no kernel-doc comment"
	done < <(awk '/^(struct|enum) [A-Za-z0-9_]+ \{/ { print NR ":" $1 ":" $2 }' "$f")
	# ioctls defined ("LINE:NAME ARG") and listed ("LINE:NAME ARG")
	local -A defined=() listed=()
	while IFS=: read -r line ioctl; do
		defined[$ioctl]=$line
	done < <(awk '/^#define DRM_IOCTL_[A-Z0-9_]*[ \t]*\\?$/ ||
		      /^#define DRM_IOCTL_[A-Z0-9_]*[ \t]+DRM_IO/ {
			l = NR; t = $0
			while (t ~ /\\$/ && (getline n) > 0) { sub(/\\$/, "", t); t = t n }
			if (match(t, /struct [a-z0-9_]+/))
				print l ":" $2 " " substr(t, RSTART + 7, RLENGTH - 7)
			else
				print l ":" $2 " -"
		      }' "$f")
	while IFS=: read -r line ioctl; do
		listed[$ioctl]=$line
	done < <(awk '/^ \* DOC: .*ioctls$/ { d = 1; next }
		      d && /^ \*\// { d = 0 }
		      d && match($0, /^ \* - %DRM_IOCTL_[A-Z0-9_]+, &struct [a-z0-9_]+:/) {
			s = substr($0, 7, RLENGTH - 7)
			sub(/, &struct /, " ", s)
			print NR ":" s
		      }' "$f")
	for ioctl in "${!defined[@]}"; do
		[ -n "${listed[$ioctl]:-}" ] ||
			echo "$f:${defined[$ioctl]}: ioctl ${ioctl% *} (struct ${ioctl#* }) is not an item of its DOC ioctls list"
	done
	for ioctl in "${!listed[@]}"; do
		[ -n "${defined[$ioctl]:-}" ] ||
			echo "$f:${listed[$ioctl]}: DOC ioctls lists ${ioctl% *} with struct ${ioctl#* }: no such ioctl"
	done
}

cd "$QGPU_ROOT" || exit 1
if [ $# -gt 0 ]; then
	files=("$@")
else
	shopt -s nullglob
	files=()
	# the driver, the contract headers it shares, the UAPI, out-of-tree glue
	for f in kernel/*.c kernel/*.h include/qgpu/*.h include/uapi/drm/*.h \
		kmod/*/*.c; do
		case $f in *.mod.c) continue ;; esac   # generated by kbuild
		files+=("$f")
	done
fi
[ ${#files[@]} -gt 0 ] || { log "no files to check"; exit 0; }
kfiles=()
plain=()
for f in "${files[@]}"; do
	seen=()
	if reaches_kernel "$f"; then kfiles+=("$f"); else plain+=("$f"); fi
done
out=
if [ ${#kfiles[@]} -gt 0 ]; then
	out+=$(perl "$cp_pl" "${OPTS[@]}" "${kfiles[@]}" 2>&1)$'\n' || true
fi
if [ ${#plain[@]} -gt 0 ]; then
	out+=$(perl "$cp_pl" "${OPTS[@]/#$IGNORE/$IGNORE,BIT_MACRO}" "${plain[@]}" 2>&1) || true
fi
for f in "${files[@]}"; do
	case $f in include/uapi/*.h) out+=$'\n'$(uapi_doc "$f") ;; esac
done
# -q still prints a "total:" line per file; anything else is a problem.
out=$(printf '%s\n' "$out" | grep -v -e '^total: ' -e '^$' || true)
if [ -n "$out" ]; then
	printf '%s\n' "$out"
	exit 1
fi
exit 0
