#!/bin/sh
# The C benchmark: builds the release libraries, bench.c and its two named-call objects (-O2),
# runs it under LD_PRELOAD=libvdsotime_preload.so and prints its Markdown tables: ns per call
# (fastest trial) of raw vDSO symbol, glibc, libvdsotime, the preload and the syscall, and each
# one's ratio to raw, median [q1-q3] over interleaved rounds (see bench.c for the method).
#
# usage: [ROUNDS=n] [TRIAL_US=us] [FROM=dir] crates/vdsotime-preload/bench/run.sh [WORKDIR]
# ROUNDS (default 201) rounds of trials of ~TRIAL_US (default 100) µs each: about 3 s.
# FROM: take libvdsotime_c.{so,a} and libvdsotime_preload.so from this directory instead of
# building them with `cargo build --release` (the tests use their debug build).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
work=${1:-$target/vdsotime-bench}
mkdir -p "$work"

if [ -z "${FROM:-}" ]; then
	cargo build --release --manifest-path "$root/Cargo.toml" -p vdsotime-c -p vdsotime-preload >&2
	FROM=$target/release
fi
FROM=$(cd "$FROM" && pwd)
sh "$root/crates/vdsotime-c/install.sh" --prefix "$work/prefix" --from "$FROM" >&2

cflags="-O2 -Wall -Wextra -Werror"
# glibc's names, bound to libc.so.6 (bench loads it with RTLD_DEEPBIND).
cc $cflags -fPIC -shared -o "$work/bench_glibc.so" "$here/plt_trials.c"
# libvdsotime's names, bound to libvdsotime's code. Linked from libvdsotime.a (the same machine
# code as libvdsotime.so, one rustc build), because linking libvdsotime.so cannot work under the
# preload today: the preload also carries the SONAME libvdsotime.so.0 (vdsotime-c's build
# script sets it, and Cargo applies it to the preload's cdylib too), so the dynamic linker takes
# the preload for libvdsotime.so.0 and binds vdsotime_* to the preload's copies.
# The archive and the system libraries it needs, as vdsotime-static.pc lists them (read here:
# pkg-config may not be installed).
static_libs=$(sed -n 's/^Libs: //p' "$work/prefix/lib/pkgconfig/vdsotime-static.pc" |
	sed "s|\${libdir}|$work/prefix/lib|g")
cc $cflags -fPIC -shared -DVDSOTIME_NAMES -o "$work/bench_libvdsotime.so" "$here/plt_trials.c" $static_libs
# The program: its own names are the preload's when run under LD_PRELOAD.
cc $cflags -o "$work/bench" "$here/bench.c" "$here/plt_trials.c" "$here/table.c" -ldl

LD_PRELOAD="$FROM/libvdsotime_preload.so" "$work/bench" -r "${ROUNDS:-201}" \
	-t "${TRIAL_US:-100}" -g "$work/bench_glibc.so" -l "$work/bench_libvdsotime.so"
