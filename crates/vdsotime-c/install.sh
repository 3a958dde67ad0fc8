#!/bin/sh
# Installs libvdsotime for C: lib/libvdsotime.so(.0), lib/libvdsotime.a, include/vdsotime.h,
# lib/pkgconfig/vdsotime.pc (shared) and lib/pkgconfig/vdsotime-static.pc (static).
#
# usage: install.sh [--prefix DIR] [--libdir DIR] [--from DIR]
#   --prefix DIR  where to install (default /usr/local); $DESTDIR is prepended to every path
#                 written, not to the paths recorded in the .pc files
#   --libdir DIR  library directory (default PREFIX/lib)
#   --from DIR    take the already built libvdsotime_c.{so,a} from DIR instead of running
#                 `cargo build --release -p vdsotime-c` (DIR is a cargo profile directory)
#
# Cargo names the outputs after the library target, vdsotime_c (the core crate owns the name
# vdsotime); this script gives them their C names. Running it twice gives the same result.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
prefix=/usr/local
libdir=
from=

while [ $# -gt 0 ]; do
	case "$1" in
	--prefix) prefix=$2; shift 2 ;;
	--libdir) libdir=$2; shift 2 ;;
	--from) from=$2; shift 2 ;;
	*) echo "install.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
[ -n "$libdir" ] || libdir=$prefix/lib

if [ -z "$from" ]; then
	cargo build --release --manifest-path "$root/Cargo.toml" -p vdsotime-c
	from=${CARGO_TARGET_DIR:-$root/target}/release
fi
for f in libvdsotime_c.so libvdsotime_c.a; do
	[ -f "$from/$f" ] || { echo "install.sh: $from/$f not found (build vdsotime-c first)" >&2; exit 1; }
done

# The workspace version, from [workspace.package] in the root manifest.
version=$(awk '/^\[/{p = ($0 == "[workspace.package]")} p && /^version *=/{gsub(/[" ]/, ""); sub(/^version=/, ""); print; exit}' "$root/Cargo.toml")
# What the Rust standard library inside libvdsotime.a needs from the system (as reported by
# `rustc --print native-static-libs` for *-linux-gnu targets).
static_deps="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"

dest=${DESTDIR:-}
mkdir -p "$dest$libdir/pkgconfig" "$dest$prefix/include"
# Replace files instead of writing into them: a running program may have the old one mapped.
install -m 0755 "$from/libvdsotime_c.so" "$dest$libdir/libvdsotime.so.0.tmp"
mv -f "$dest$libdir/libvdsotime.so.0.tmp" "$dest$libdir/libvdsotime.so.0"
ln -sf libvdsotime.so.0 "$dest$libdir/libvdsotime.so"
install -m 0644 "$from/libvdsotime_c.a" "$dest$libdir/libvdsotime.a"
install -m 0644 "$here/include/vdsotime.h" "$dest$prefix/include/vdsotime.h"

pc_head() {
	cat <<EOF
prefix=$prefix
exec_prefix=\${prefix}
libdir=$libdir
includedir=\${prefix}/include

EOF
}

{
	pc_head
	cat <<EOF
Name: vdsotime
Description: Read the clocks through the Linux vDSO, with libc semantics (shared library)
Version: $version
Libs: -L\${libdir} -lvdsotime
Cflags: -I\${includedir}
EOF
} >"$dest$libdir/pkgconfig/vdsotime.pc"

{
	pc_head
	cat <<EOF
Name: vdsotime-static
Description: Read the clocks through the Linux vDSO, with libc semantics (static library)
Version: $version
Libs: \${libdir}/libvdsotime.a $static_deps
Cflags: -I\${includedir}
EOF
} >"$dest$libdir/pkgconfig/vdsotime-static.pc"

echo "installed libvdsotime $version into $dest$prefix"
