#!/bin/sh
# The first clock reading of a fresh C process, libvdsotime's against glibc's (first_call.c):
# libvdsotime installed by install.sh (the `dist` build: release with LTO, stripped), the
# program linked with -lvdsotime through vdsotime.pc and -z now, so that the dynamic linker
# resolves both paths' names at load rather than in the first call (lazy binding would
# time its symbol lookup, not the call). Prints a Markdown table.
#
# usage: [ROUNDS=n] [FROM=dir] [CC=compiler] crates/vdsotime-c/bench/first_call.sh [WORKDIR]
# ROUNDS (default 101) rounds of one fresh process per path. FROM: install the libraries
# built in this directory instead of building them (install.sh --from).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=${1:-${CARGO_TARGET_DIR:-$root/target}/vdsotime-first-call-bench}
mkdir -p "$work"

sh "$here/../install.sh" --prefix "$work/prefix" --no-preload ${FROM:+--from "$FROM"} >/dev/null
flags=$(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --cflags --libs vdsotime)
# shellcheck disable=SC2086 # word splitting of the flags is meant
${CC:-cc} -O2 -Wall -Wextra -Werror -o "$work/first_call" "$here/first_call.c" $flags \
	-Wl,-rpath,"$work/prefix/lib" -Wl,-z,now
"$work/first_call" "${ROUNDS:-101}"
