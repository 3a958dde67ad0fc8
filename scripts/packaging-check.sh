#!/usr/bin/env bash
# The crates as users get them (CI's packaging step):
# - `cargo publish --dry-run` of vdsotime and vdsotime-cli: each builds from its packaged
#   files alone (cargo packs both into a local registry and builds the tool against it);
# - `cargo install --path crates/vdsotime-cli` into a scratch root, and that `vdsotime` runs
#   (its size is printed);
# - libvdsotime as crates/vdsotime-c/install.sh installs it: no debug information in the
#   installed libraries, libvdsotime.so.0 at most 1 MiB, and a program calling every C
#   function (tests/c/link_matrix.c) linked -static and -static-pie through
#   `pkg-config --static --libs vdsotime-static`, at most 2 MiB, and run;
# - the declared minimum Rust versions: 1.85 builds the core (with and without std), 1.88
#   the tool, libvdsotime and the preload;
# - loongarch64: the core compiled (no_std) with `-Z build-std=core` from the toolchain's
#   rust-src (RUSTC_BOOTSTRAP=1 on stable, as the fuzz step does), since no rust-std for
#   that target can be downloaded here.
# A toolchain or component rustup cannot install makes its check print
# `SKIP <check>: <reason>`, which .ci/run's summary lists; every other failure fails the step.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo publish --dry-run --allow-dirty -p vdsotime -p vdsotime-getrandom -p vdsotime-cli

CARGO_TARGET_DIR=target cargo install --quiet --locked --path crates/vdsotime-cli \
	--root target/install-check
target/install-check/bin/vdsotime info >/dev/null
echo "cargo install: target/install-check/bin/vdsotime info ran; $(stat -c %s target/install-check/bin/vdsotime) bytes"

# size_at_most FILE BYTES: prints FILE's size; fails past BYTES.
size_at_most() {
	local size
	size=$(stat -c %s "$1")
	echo "$1: $size bytes (limit $2)"
	[ "$size" -le "$2" ] || { echo "$1 is larger than $2 bytes" >&2; return 1; }
}

c=target/c-install-check
rm -rf "$c"
sh crates/vdsotime-c/install.sh --prefix "$PWD/$c/prefix" >/dev/null
for f in "$c"/prefix/lib/libvdsotime.so.0 "$c"/prefix/lib/libvdsotime_preload.so "$c"/prefix/lib/libvdsotime.a; do
	if [ "$(readelf -S "$f" | grep -c '\.debug_')" != 0 ]; then
		echo "$f has debug information" >&2
		exit 1
	fi
done
size_at_most "$c/prefix/lib/libvdsotime.so.0" $((1 << 20))
ls -l "$c"/prefix/lib/libvdsotime_preload.so "$c"/prefix/lib/libvdsotime.a
for mode in -static -static-pie; do
	# shellcheck disable=SC2046 # the flags are words
	cc -O2 "$mode" -o "$c/every-function$mode" crates/vdsotime-c/tests/c/link_matrix.c -pthread \
		$(PKG_CONFIG_PATH="$c/prefix/lib/pkgconfig" pkg-config --cflags --static --libs vdsotime-static)
	size_at_most "$c/every-function$mode" $((2 << 20))
	"$c/every-function$mode" vdso
done

# toolchain NAME: installs it, or says SKIP and returns 1.
toolchain() {
	if ! out=$(rustup toolchain install "$1" --profile minimal 2>&1); then
		echo "SKIP rust-$1: rustup could not install it here: $(echo "$out" | grep -m1 -i error)"
		return 1
	fi
}

export CARGO_TARGET_DIR=target/msrv
if toolchain 1.85; then
	cargo +1.85 build --quiet -p vdsotime
	cargo +1.85 build --quiet -p vdsotime --no-default-features
	echo "Rust 1.85 built the core, with and without std"
fi
if toolchain 1.88; then
	cargo +1.88 build --quiet -p vdsotime-cli -p vdsotime-c -p vdsotime-preload
	echo "Rust 1.88 built the tool, libvdsotime and the preload"
fi
if out=$(rustup component add rust-src 2>&1); then
	CARGO_TARGET_DIR=target/loongarch64 RUSTC_BOOTSTRAP=1 cargo build --quiet -Z build-std=core \
		-p vdsotime --no-default-features --target loongarch64-unknown-linux-gnu
	echo "the core compiled for loongarch64-unknown-linux-gnu (no_std, build-std=core)"
else
	echo "SKIP loongarch64: rustup could not add rust-src here: $(echo "$out" | grep -m1 -i error)"
fi
