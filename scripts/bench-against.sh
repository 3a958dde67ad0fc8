#!/usr/bin/env bash
# Times this tree's clock_gettime against a git revision's, in one process, interleaved:
# every round runs the raw vDSO symbol, this tree's call, the revision's call and the
# syscall once each, in rotated order. Prints each path's fastest trial and the median
# [interquartile range] over rounds of its ratio to the raw symbol.
#
#   scripts/bench-against.sh REV [ROUNDS [CALLS]]     e.g. scripts/bench-against.sh HEAD~5
#
# The revision's crates/vdsotime is unpacked under target/bench-against/ with its version
# renamed, so both builds link into one program.
set -euo pipefail
rev=${1:?usage: scripts/bench-against.sh REV [ROUNDS [CALLS]]}
here=$(cd "$(dirname "$0")/.." && pwd)
dir="$here/target/bench-against"
rm -rf "$dir" && mkdir -p "$dir/before" "$dir/src"
git -C "$here" archive "$rev" crates/vdsotime | tar -x -C "$dir/before"
manifest="$dir/before/crates/vdsotime/Cargo.toml"
# Stand alone: no workspace keys, a version of its own (two `vdsotime`s in one build).
sed -i -e 's/^version\.workspace = true/version = "0.0.0-before"/' \
	-e 's/^edition\.workspace = true/edition = "2021"/' \
	-e 's/^linux-raw-sys\.workspace = true/linux-raw-sys = { version = "0.12.1", default-features = false, features = ["general", "errno", "prctl", "auxvec", "no_std"] }/' \
	-e '/^[a-z-]*\.workspace = true/d' -e '/^\[lints\]/d' -e '/^workspace = true/d' \
	"$manifest"
cat >"$dir/Cargo.toml" <<TOML
[package]
name = "bench-against"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
vdsotime = { path = "$here/crates/vdsotime" }
before = { package = "vdsotime", path = "before/crates/vdsotime" }

[profile.release]
debug = 1

[workspace]
TOML
cp "$here/scripts/bench-against/main.rs" "$dir/src/main.rs"
cargo build --quiet --release --manifest-path "$dir/Cargo.toml"
echo "before = $(git -C "$here" rev-parse --short "$rev"), after = this tree ($(git -C "$here" rev-parse --short HEAD)$(git -C "$here" diff --quiet || echo ', modified'))"
"$dir/target/release/bench-against" "${2:-31}" "${3:-20000}"
