#!/bin/sh
# Run as root inside a fresh Debian root file system by `cargo xtask dist --test`: installs
# the vdsotime packages from DIR (every *.deb there) with apt, uses them as the README says,
# then purges them and checks that no file of theirs is left.
#
# usage: in-fresh-root.sh DIR [--no-cc]
#   DIR also holds quickstart.c (the README's C quick start) and readme-c.sh (the README's
#   commands that build it with the packages installed).
#   --no-cc: the root has no C compiler (the emulated arm64 root); DIR then holds
#            quickstart-shared and quickstart-static, built for it outside.
set -eu
dir=$1
cc=yes
[ "${2:-}" = --no-cc ] && cc=no
export DEBIAN_FRONTEND=noninteractive PAGER=cat MANPAGER=cat LC_ALL=C.UTF-8
unset LD_LIBRARY_PATH LD_PRELOAD PKG_CONFIG_PATH
packages="libvdsotime0 libvdsotime-dev libvdsotime-preload vdsotime"
work=$(mktemp -d)

check() { echo "ok: $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

echo "== $(. /etc/os-release && echo "$PRETTY_NAME"), $(dpkg --print-architecture)"
# The paths the packages bring that this root does not have yet: after the purge, none may
# be left (a directory that was already here, /usr/include, may stay).
for deb in "$dir"/*.deb; do dpkg-deb --fsys-tarfile "$deb" | tar -t; done |
	sed -e 's|^\./|/|' -e 's|/$||' | grep . | sort -u |
	while read -r f; do [ -e "$f" ] || [ -L "$f" ] || echo "$f"; done >"$work/files"
# Only Debian's archive is configured in this root: every dependency comes from it.
apt-get install -y -q --no-install-recommends "$dir"/*.deb >"$work/apt.log" 2>&1 ||
	{ cat "$work/apt.log"; fail "apt-get install of the packages"; }
check "apt-get install $(cd "$dir" && echo *.deb)"

if [ "$cc" = yes ]; then
	# The README's C quick start for the packages: its `cc` lines as printed (DIR/readme-c.sh,
	# the README's block), in a directory holding the program as prog.c.
	cp "$dir/quickstart.c" "$work/prog.c"
	built=0
	while IFS= read -r line; do
		case $line in cc\ *) ;; *) continue ;; esac
		(cd "$work" && sh -e -c "$line") || fail "the README's: $line"
		case $line in
		*" -static "*) mv "$work/prog" "$work/quickstart-static" ;;
		*) mv "$work/prog" "$work/quickstart-shared" ;;
		esac
		built=$((built + 1))
	done <"$dir/readme-c.sh"
	[ "$built" = 2 ] && [ -x "$work/quickstart-shared" ] && [ -x "$work/quickstart-static" ] ||
		fail "the README's package commands built $built programs, not one shared and one -static"
	check "the README's C commands for the packages, as printed ($built builds)"
else
	cp "$dir/quickstart-shared" "$dir/quickstart-static" "$work/"
fi
# No rpath, no LD_LIBRARY_PATH, no ldconfig run by hand: the loader finds libvdsotime.so.0
# through the cache the package's ldconfig trigger rebuilt.
if command -v readelf >/dev/null && readelf -d "$work/quickstart-shared" | grep -Eq 'RPATH|RUNPATH'; then
	fail "quickstart-shared carries an rpath"
fi
"$work/quickstart-shared" >"$work/out" || fail "quickstart (shared) failed"
check "quickstart, shared: $(cat "$work/out")"
"$work/quickstart-static" >"$work/out" || fail "quickstart (-static) failed"
check "quickstart, -static: $(cat "$work/out")"

VDSOTIME_PRELOAD_DEBUG=all LD_PRELOAD=libvdsotime_preload.so date >"$work/out" 2>"$work/err" ||
	{ cat "$work/err"; fail "LD_PRELOAD=libvdsotime_preload.so date"; }
grep -q 'clock_gettime: bound' "$work/err" || { cat "$work/err"; fail "the preload bound nothing"; }
check "LD_PRELOAD=libvdsotime_preload.so date: $(cat "$work/out"); $(grep -c ': bound' "$work/err") bindings"

vdsotime --version >"$work/out" || fail "vdsotime --version"
grep -q '^source: commit [0-9a-f]\{40\}' "$work/out" || { cat "$work/out"; fail "vdsotime --version names no commit"; }
check "vdsotime --version: $(tr '\n' ' ' <"$work/out")"
vdsotime >"$work/out" 2>&1 || { cat "$work/out"; fail "vdsotime"; }
check "vdsotime ($(wc -l <"$work/out") lines)"
status=0
vdsotime doctor >"$work/out" 2>&1 || status=$?
case $status in 0 | 2) ;; *) cat "$work/out"; fail "vdsotime doctor exited $status" ;; esac
check "vdsotime doctor (exit $status)"
vdsotime check >"$work/out" 2>&1 || { cat "$work/out"; fail "vdsotime check"; }
check "vdsotime check"

if command -v man >/dev/null; then
	for page in vdsotime vdsotime_clock_gettime libvdsotime libvdsotime_preload; do
		man "$page" >"$work/out" 2>&1 || { cat "$work/out"; fail "man $page"; }
		[ -s "$work/out" ] || fail "man $page is empty"
	done
	check "man vdsotime, man vdsotime_clock_gettime, man libvdsotime, man libvdsotime_preload"
	apropos vdsotime >"$work/out" || fail "apropos vdsotime found nothing"
	grep -q '^vdsotime ' "$work/out" && grep -q '^libvdsotime ' "$work/out" ||
		{ cat "$work/out"; fail "apropos vdsotime misses vdsotime(1) or libvdsotime(3)"; }
	check "apropos vdsotime: $(wc -l <"$work/out") pages"
else
	echo "SKIP man pages in the fresh root: man-db is not installed in this root"
fi

# The doctor's timer and service are shipped, and enabled by nobody but the administrator.
for unit in vdsotime-doctor.service vdsotime-doctor.timer; do
	[ -f "/lib/systemd/system/$unit" ] || [ -f "/usr/lib/systemd/system/$unit" ] ||
		fail "$unit is not installed"
done
[ -z "$(find /etc/systemd/system -name 'vdsotime-doctor.*' 2>/dev/null)" ] ||
	fail "the package enabled vdsotime-doctor"
[ -f /usr/share/vdsotime/vdsotime.rules.yml ] || fail "vdsotime.rules.yml is not installed"
check "vdsotime-doctor.service and .timer installed, not enabled; the alert rules installed"

apt-get purge -y -q $packages >"$work/apt.log" 2>&1 || { cat "$work/apt.log"; fail "apt-get purge"; }
left=$(while read -r f; do [ ! -e "$f" ] && [ ! -L "$f" ] || echo "$f"; done <"$work/files")
[ -z "$left" ] || fail "left after purge: $left"
! ldconfig -p | grep -q vdsotime || fail "the loader's cache still names vdsotime's libraries"
check "apt-get purge $packages: nothing left ($(wc -l <"$work/files") paths checked)"
rm -rf "$work"
echo "PASS: fresh root"
