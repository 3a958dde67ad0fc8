#!/bin/sh
# libvdsotime's functions against glibc's in one program (static.c), linked the way a
# packager's user would: installed by install.sh (the `dist` build: release with LTO,
# stripped) and linked through vdsotime-static.pc, fully static by default. Prints a
# Markdown table of ns per call (fastest trial) and the ratio libvdsotime / glibc, median
# [q1-q3] over interleaved rounds.
#
# usage: [ROUNDS=n] [TRIAL_US=us] [LINK=-static|-static-pie|dynamic] [FROM=dir] [CC=compiler]
#        crates/vdsotime-c/bench/static.sh [WORKDIR]
# ROUNDS (default 201) rounds of trials of ~TRIAL_US (default 100) µs each. LINK=dynamic
# links the archive into a dynamic program. FROM: install the libraries built in this
# directory instead of building them (install.sh --from).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
bench=$root/crates/vdsotime-preload/bench
work=${1:-${CARGO_TARGET_DIR:-$root/target}/vdsotime-static-bench}
mkdir -p "$work"

sh "$here/../install.sh" --prefix "$work/prefix" --no-preload ${FROM:+--from "$FROM"} >/dev/null
link=${LINK:--static}
[ "$link" != dynamic ] || link=
libs=$(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --cflags --static --libs vdsotime-static)
# shellcheck disable=SC2086 # word splitting of the flags is meant
${CC:-cc} -O2 -Wall -Wextra -Werror $link -I"$bench" -DLINKED_AS="\"${link:-dynamic} ($(basename "${CC:-cc}"))\"" \
	-o "$work/static" "$here/static.c" "$bench/table.c" "$bench/measure.c" $libs
"$work/static" -r "${ROUNDS:-201}" -t "${TRIAL_US:-100}"
