#!/bin/sh
# Builds the release libraries and bench.c (-O2), runs it through glibc, libvdsotime (shared),
# the preload and the raw system call, and prints a Markdown table of ns per call
# (fastest of 7 trials of 1M calls). Takes about 20 s per round.
#
# usage: [ROUNDS=n] crates/vdsotime-preload/bench/run.sh [WORKDIR]
# ROUNDS (default 1) repeats the whole measurement, alternating glibc/lib/syscall and preload
# runs, and keeps each cell's fastest: on a busy machine this filters out the neighbours.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
work=${1:-$target/vdsotime-bench}
mkdir -p "$work"

cargo build --release --manifest-path "$root/Cargo.toml" -p vdsotime-c -p vdsotime-preload >&2
sh "$root/crates/vdsotime-c/install.sh" --prefix "$work/prefix" --from "$target/release" >&2
cc -O2 -Wall -Wextra -o "$work/bench" "$here/bench.c" -I"$work/prefix/include" \
	-L"$work/prefix/lib" -lvdsotime -Wl,-rpath,"$work/prefix/lib"

: >"$work/results.tsv"
round=0
while [ "$round" -lt "${ROUNDS:-1}" ]; do
	"$work/bench" glibc lib syscall >>"$work/results.tsv"
	LD_PRELOAD="$target/release/libvdsotime_preload.so" "$work/bench" preload >>"$work/results.tsv"
	round=$((round + 1))
done

awk -F '\t' '
	!($1 in seen) { seen[$1] = 1; order[++n] = $1 }
	!(($1, $2) in ns) || $3 + 0 < ns[$1, $2] + 0 { ns[$1, $2] = $3 }
	END {
		print "| function | glibc | libvdsotime (shared) | preload | syscall |"
		print "|---|---:|---:|---:|---:|"
		for (i = 1; i <= n; i++) {
			f = order[i]
			printf "| %s | %s | %s | %s | %s |\n", f, ns[f, "glibc"], ns[f, "lib"], ns[f, "preload"], ns[f, "syscall"]
		}
	}' "$work/results.tsv"
