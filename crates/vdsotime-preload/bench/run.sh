#!/bin/sh
# The C benchmark: builds the release libraries, bench.c and its two named-call objects (-O2),
# runs it under LD_PRELOAD=libvdsotime_preload.so and prints its Markdown tables: ns per call
# (fastest trial) of raw vDSO symbol, glibc, libvdsotime, the preload and the syscall, and each
# one's ratio to raw, median [q1-q3] over interleaved rounds (see bench.c for the method).
#
# usage: [ROUNDS=n] [TRIAL_US=us] [FROM=dir] [CC=compiler] crates/vdsotime-preload/bench/run.sh [WORKDIR]
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
${CC:-cc} $cflags -fPIC -shared -o "$work/bench_glibc.so" "$here/plt_trials.c"
# libvdsotime's names, bound to libvdsotime.so.0 as a program linked with -lvdsotime binds them
# (its clock_gettime through the PLT; time and gettimeofday, IFUNCs on glibc, straight to the
# vDSO).
${CC:-cc} $cflags -fPIC -shared -DVDSOTIME_NAMES -o "$work/bench_libvdsotime.so" "$here/plt_trials.c" \
	-L"$work/prefix/lib" -lvdsotime -Wl,-rpath,"$work/prefix/lib"
# The plain names again, loaded without RTLD_DEEPBIND: under LD_PRELOAD they bind to the preload.
${CC:-cc} $cflags -fPIC -shared -o "$work/bench_preload.so" "$here/plt_trials.c"
# The program.
${CC:-cc} $cflags -o "$work/bench" "$here/bench.c" "$here/plt_trials.c" "$here/table.c" "$here/measure.c" -ldl

LD_PRELOAD="$FROM/libvdsotime_preload.so" "$work/bench" -r "${ROUNDS:-201}" \
	-t "${TRIAL_US:-100}" -g "$work/bench_glibc.so" -l "$work/bench_libvdsotime.so" \
	-p "$work/bench_preload.so"
