#!/bin/sh
# Builds and installs libvdsotime for C programs: see usage() below, and docs/c.md.
#
# Cargo names the outputs after the library targets, vdsotime_c and vdsotime_preload (the
# core crate owns the name vdsotime); this script gives them their C names. Running it twice
# gives the same result.
set -eu

usage() {
	cat <<'EOF'
usage: install.sh [--prefix DIR] [--libdir DIR] [--includedir DIR] [--mandir DIR]
                  [--from DIR] [--no-preload] [--no-strip]
       (each option that takes a value also takes it as --option=VALUE)

Builds libvdsotime (shared library and static archive) and the LD_PRELOAD library with
cargo, then installs:
  LIBDIR/libvdsotime.so.0, libvdsotime.so (link), libvdsotime.a
  LIBDIR/libvdsotime_preload.so                   (the LD_PRELOAD library)
  LIBDIR/pkgconfig/vdsotime.pc, vdsotime-static.pc
  INCLUDEDIR/vdsotime.h
  MANDIR/man3/libvdsotime.3, and one page per function that points to it
  MANDIR/man3/libvdsotime_preload.3               (the LD_PRELOAD library's page)

  --prefix DIR      installation prefix (default /usr/local)
  --libdir DIR      libraries and pkg-config files (default PREFIX/lib)
  --includedir DIR  the header (default PREFIX/include)
  --mandir DIR      manual pages (default PREFIX/share/man)
  --from DIR        install what is already built in DIR (a cargo profile directory with
                    libvdsotime_c.so, libvdsotime_c.a and libvdsotime_preload.so) instead of
                    building: `cargo rustc --profile dist --lib -p vdsotime-c --crate-type
                    cdylib,staticlib` and `cargo rustc --profile dist --lib -p
                    vdsotime-preload --crate-type cdylib` build them as this script does
  --no-preload      leave the LD_PRELOAD library out
  --no-strip        keep debug information (installed files are stripped of it by default)
  -h, --help        this text

Environment:
  DESTDIR           staging directory prepended to every path written (packaging); the
                    .pc files record the paths without it
  CARGO, CARGO_TARGET_DIR
                    the cargo to build with, and where it builds (default: target/ in the
                    source tree)
  STRIP             the strip command (default strip); another architecture's libraries
                    need that architecture's strip
EOF
}

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
prefix=/usr/local
libdir=
includedir=
mandir=
from=
preload=yes
strip=yes

# The value of option $1, which must be there ($2).
value() {
	[ "$#" -ge 2 ] || { echo "install.sh: $1 needs a value (see --help)" >&2; exit 2; }
	printf '%s' "$2"
}

while [ $# -gt 0 ]; do
	case "$1" in
	--prefix) prefix=$(value "$@"); shift 2 ;;
	--libdir) libdir=$(value "$@"); shift 2 ;;
	--includedir) includedir=$(value "$@"); shift 2 ;;
	--mandir) mandir=$(value "$@"); shift 2 ;;
	--from) from=$(value "$@"); shift 2 ;;
	--prefix=*) prefix=${1#*=}; shift ;;
	--libdir=*) libdir=${1#*=}; shift ;;
	--includedir=*) includedir=${1#*=}; shift ;;
	--mandir=*) mandir=${1#*=}; shift ;;
	--from=*) from=${1#*=}; shift ;;
	--no-preload) preload=no; shift ;;
	--no-strip) strip=no; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "install.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
	esac
done
case "$prefix" in
/*) ;;
*) echo "install.sh: --prefix must be an absolute path: $prefix" >&2; exit 2 ;;
esac
[ -n "$libdir" ] || libdir=$prefix/lib
[ -n "$includedir" ] || includedir=$prefix/include
[ -n "$mandir" ] || mandir=$prefix/share/man

if [ -z "$from" ]; then
	cargo=${CARGO:-cargo}
	manifest=$root/Cargo.toml
	# The `dist` profile is release with LTO, which applies without the crates' rlib type:
	# the archive then holds only what its functions reach.
	"$cargo" rustc --quiet --profile dist --lib --manifest-path "$manifest" \
		-p vdsotime-c --crate-type cdylib,staticlib
	if [ "$preload" = yes ]; then
		"$cargo" rustc --quiet --profile dist --lib --manifest-path "$manifest" \
			-p vdsotime-preload --crate-type cdylib
	fi
	from=${CARGO_TARGET_DIR:-$root/target}/dist
fi
wanted="libvdsotime_c.so libvdsotime_c.a"
[ "$preload" = no ] || wanted="$wanted libvdsotime_preload.so"
for f in $wanted; do
	[ -f "$from/$f" ] || {
		echo "install.sh: $from/$f not found (build it first, or see --help)" >&2
		exit 1
	}
done

# The workspace version, from [workspace.package] in the root manifest.
version=$(awk '/^\[/{p = ($0 == "[workspace.package]")} p && /^version *=/{gsub(/[" ]/, ""); sub(/^version=/, ""); print; exit}' "$root/Cargo.toml")
# What the Rust standard library inside libvdsotime.a needs from the C library (as
# `rustc --print native-static-libs` reports for *-linux-gnu targets), without its -lgcc_s:
# the C compiler driver links the unwinder itself (libgcc_s for a dynamic program,
# libgcc_eh with -static), and -lgcc_s would make `cc -static` fail.
static_deps="-lutil -lrt -lpthread -lm -ldl -lc"

dest=${DESTDIR:-}
mkdir -p "$dest$libdir/pkgconfig" "$dest$includedir" "$dest$mandir/man3"

# install_file MODE SOURCE TARGET: a new file moved into place (a running program may have
# the old one mapped), stripped of debug information unless --no-strip.
install_file() {
	install -m "$1" "$2" "$3.tmp"
	if [ "$strip" = yes ] && ! ${STRIP:-strip} --strip-debug "$3.tmp" 2>"$3.err"; then
		echo "install.sh: ${STRIP:-strip} cannot strip $2: $(cat "$3.err")" >&2
		echo "install.sh: set STRIP to this architecture's strip, or pass --no-strip" >&2
		rm -f "$3.tmp" "$3.err"
		exit 1
	fi
	rm -f "$3.err"
	mv -f "$3.tmp" "$3"
}

install_file 0755 "$from/libvdsotime_c.so" "$dest$libdir/libvdsotime.so.0"
ln -sf libvdsotime.so.0 "$dest$libdir/libvdsotime.so"
install_file 0644 "$from/libvdsotime_c.a" "$dest$libdir/libvdsotime.a"
if [ "$preload" = yes ]; then
	install_file 0755 "$from/libvdsotime_preload.so" "$dest$libdir/libvdsotime_preload.so"
fi
install -m 0644 "$here/include/vdsotime.h" "$dest$includedir/vdsotime.h"
install -m 0644 "$here/man/libvdsotime.3" "$dest$mandir/man3/libvdsotime.3"
# One page per function the header declares: a symbolic link to libvdsotime(3), which
# `man NAME` and `man -l FILE` both follow (a `.so` request resolves against the manual
# tree, so `man -l` on the file itself fails from any other directory).
for name in $(grep -o 'vdsotime_[a-z0-9_]*(' "$here/include/vdsotime.h" | tr -d '(' | sort -u); do
	rm -f "$dest$mandir/man3/$name.3"
	ln -s libvdsotime.3 "$dest$mandir/man3/$name.3"
done
if [ "$preload" = yes ]; then
	install -m 0644 "$here/../vdsotime-preload/man/libvdsotime_preload.3" \
		"$dest$mandir/man3/libvdsotime_preload.3"
fi

pc_head() {
	cat <<EOF
prefix=$prefix
exec_prefix=\${prefix}
libdir=$libdir
includedir=$includedir

EOF
}

{
	pc_head
	cat <<EOF
Name: vdsotime
Description: Read the clocks through the Linux vDSO, with libc semantics (shared library)
Version: $version
Libs: -L\${libdir} -lvdsotime
Libs.private: $static_deps
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

echo "installed libvdsotime $version into ${dest}$prefix"
[ "$preload" = no ] || echo "  LD_PRELOAD library: $libdir/libvdsotime_preload.so"
if [ -n "$dest" ]; then
	cat <<EOF
Packagers: the installed tree expects $libdir to be in the dynamic linker's search path
(run ldconfig after installing the package), or programs to be linked with an rpath.
EOF
else
	cat <<EOF
Programs linked against libvdsotime.so.0 find it at run time if $libdir is in the dynamic
linker's search path (/etc/ld.so.conf and /etc/ld.so.conf.d/*.conf): then run
    ldconfig
as root after installing. Otherwise link with
    cc prog.c \$(pkg-config --cflags --libs vdsotime) -Wl,-rpath,$libdir
(pkg-config finds vdsotime.pc with PKG_CONFIG_PATH=$libdir/pkgconfig), or set
LD_LIBRARY_PATH=$libdir when running. A program linked statically needs neither:
    cc -static prog.c \$(pkg-config --cflags --static --libs vdsotime-static)
EOF
fi
