#!/usr/bin/env bash
# Fuzzes vdsotime's ELF parser (fuzz/fuzz_targets/parse.rs) with libFuzzer + AddressSanitizer.
#
#   scripts/fuzz-smoke.sh [SECONDS]      default 60; exits non-zero on any crash or leak
#
# Works on a machine with only the stable toolchain: stable ships the ASan runtime for
# x86_64-unknown-linux-gnu, and RUSTC_BOOTSTRAP=1 unlocks -Zsanitizer there. A nightly is
# used only when stable lacks the runtime (or when VDSOTIME_FUZZ_TOOLCHAIN names one).
# Installs cargo-fuzz if missing. Seeds the corpus with this machine's own vDSO, the test
# fixtures and every past regression input. Idempotent; the corpus grows across runs.
set -euo pipefail

secs="${1:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

if ! command -v cargo-fuzz >/dev/null 2>&1; then
    echo "fuzz-smoke: installing cargo-fuzz"
    cargo install cargo-fuzz --locked --version 0.13.2
fi

host="$(rustc -vV | sed -n 's/^host: //p')"
# With rustup, pick a toolchain by name; without it, use the one rustc on PATH.
tc() { if command -v rustup >/dev/null 2>&1; then echo "+$1"; fi; }
has_asan() {
    local sysroot
    sysroot="$(rustc $(tc "$1") --print sysroot)" || return 1
    compgen -G "$sysroot/lib/rustlib/$host/lib/*rt.asan.a" >/dev/null
}
toolchain="${VDSOTIME_FUZZ_TOOLCHAIN:-stable}"
if ! has_asan "$toolchain"; then
    if command -v rustup >/dev/null 2>&1 && rustup toolchain list | grep -q '^nightly' && has_asan nightly; then
        toolchain=nightly
    else
        echo "fuzz-smoke: no AddressSanitizer runtime for $host in $toolchain or nightly" >&2
        exit 1
    fi
fi
# Stable refuses -Z flags without this; harmless on nightly.
export RUSTC_BOOTSTRAP=1

corpus=fuzz/corpus/parse
mkdir -p "$corpus"
# This process tree's own vDSO image, read from /proc/self/mem by python3.
python3 - "$corpus/own-vdso.so" <<'EOF'
import sys
for line in open("/proc/self/maps"):
    if line.rstrip().endswith("[vdso]"):
        lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
        with open("/proc/self/mem", "rb") as mem:
            mem.seek(lo)
            data = mem.read(hi - lo)
        open(sys.argv[1], "wb").write(data)
        break
EOF
for f in crates/vdsotime/tests/fixtures/*.so fuzz/regressions/*.bin; do
    if [ -f "$f" ]; then cp -f "$f" "$corpus/seed-$(basename "$f")"; fi
done

echo "fuzz-smoke: toolchain $toolchain, ${secs}s, corpus $(ls "$corpus" | wc -l) files"
# -a: debug assertions and overflow checks, so arithmetic overflow in the parser is a crash.
# shellcheck disable=SC2046
if ! cargo $(tc "$toolchain") fuzz run --fuzz-dir fuzz -a parse "$corpus" -- \
    -max_total_time="$secs" -dict=fuzz/parse.dict -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1; then
    echo "fuzz-smoke: FAILED. Failing input(s), to add to fuzz/regressions/:" >&2
    ls -l fuzz/artifacts/parse/ >&2 || true
    exit 1
fi
echo "fuzz-smoke: no crash in ${secs}s"
