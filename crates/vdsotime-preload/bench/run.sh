#!/bin/sh
# The C benchmark: builds the release libraries, bench.c and its two named-call objects (-O2),
# runs it under LD_PRELOAD=libvdsotime_preload.so and prints its Markdown tables: ns per call
# (fastest trial) of raw vDSO symbol, glibc, libvdsotime, the preload and the syscall, and each
# one's ratio to raw, median [q1-q3] over interleaved rounds (see bench.c for the method).
#
# usage: [ROUNDS=n] [TRIAL_US=us] crates/vdsotime-preload/bench/run.sh [WORKDIR]
# ROUNDS (default 201) rounds of trials of ~TRIAL_US (default 100) µs each: about 3 s.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
work=${1:-$target/vdsotime-bench}
mkdir -p "$work"

cargo build --release --manifest-path "$root/Cargo.toml" -p vdsotime-c -p vdsotime-preload >&2
sh "$root/crates/vdsotime-c/install.sh" --prefix "$work/prefix" --from "$target/release" >&2

cflags="-O2 -Wall -Wextra -Werror"
# glibc's names, bound to libc.so.6 (bench loads it with RTLD_DEEPBIND).
cc $cflags -fPIC -shared -o "$work/bench_glibc.so" "$here/plt_trials.c"
# libvdsotime's names, bound to libvdsotime's code. Linked from libvdsotime.a (the same machine
# code as libvdsotime.so, one rustc build), because linking libvdsotime.so cannot work under the
# preload today: the preload also carries the SONAME libvdsotime.so.0 (vdsotime-c's build
# script sets it, and Cargo applies it to the preload's cdylib too), so the dynamic linker takes
# the preload for libvdsotime.so.0 and binds vdsotime_* to the preload's copies.
cc $cflags -fPIC -shared -DVDSOTIME_NAMES -o "$work/bench_libvdsotime.so" "$here/plt_trials.c" \
	$(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --libs vdsotime-static)
# The program: its own names are the preload's when run under LD_PRELOAD.
cc $cflags -o "$work/bench" "$here/bench.c" "$here/plt_trials.c" "$here/table.c" -ldl

LD_PRELOAD="$target/release/libvdsotime_preload.so" "$work/bench" -r "${ROUNDS:-201}" \
	-t "${TRIAL_US:-100}" -g "$work/bench_glibc.so" -l "$work/bench_libvdsotime.so"
