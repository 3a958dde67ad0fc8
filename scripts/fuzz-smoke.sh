#!/usr/bin/env bash
# Fuzzes vdsotime's ELF parser with libFuzzer + AddressSanitizer and debug assertions (so
# arithmetic overflow in the parser is a crash), every target at once:
#   parse       any bytes as the image (fuzz/fuzz_targets/parse.rs)
#   structured  images assembled from drawn fields (fuzz/fuzz_targets/structured.rs)
#
#   scripts/fuzz-smoke.sh [SECONDS] [TARGET...]   SECONDS per target (default 45), every
#                                                  target by default; non-zero on a crash or leak
#
# Works on a machine with only the stable toolchain: stable ships the ASan runtime for
# x86_64-unknown-linux-gnu, and RUSTC_BOOTSTRAP=1 unlocks -Zsanitizer there. A nightly is
# used only when stable lacks the runtime (or when VDSOTIME_FUZZ_TOOLCHAIN names one).
# Installs cargo-fuzz if missing. Seeds the byte-level corpus with this machine's own vDSO,
# the test fixtures and every past regression input. Idempotent; the corpora grow across runs.
set -euo pipefail

secs="${1:-45}"
shift || true
targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then targets=(parse structured); fi
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

# The byte-level target's seeds: this process tree's own vDSO image (read from
# /proc/self/mem by python3), the fixtures and every past regression input. The structured
# target needs none: its empty input already builds a well-formed image.
seed_parse() {
    python3 - "$1/own-vdso.so" <<'EOF'
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
        if [ -f "$f" ]; then cp -f "$f" "$1/seed-$(basename "$f")"; fi
    done
}

# fuzz_one TARGET: one target's run; its output to the terminal once it ends.
fuzz_one() {
    local target=$1 corpus="fuzz/corpus/$1" extra
    mkdir -p "$corpus"
    case "$target" in
        parse)
            seed_parse "$corpus"
            extra=(-dict=fuzz/parse.dict -max_len=65536)
            ;;
        structured)
            # Value profiling rewards a comparison that came closer (an offset against a
            # bound): how bent fields creep up on the limits. 64 bytes are the shape and
            # up to ~24 edits, allowed from the start (no slow growth of the length).
            extra=(-use_value_profile=1 -max_len=64 -len_control=0)
            ;;
        *)
            echo "fuzz-smoke: unknown target $target (parse, structured)" >&2
            return 2
            ;;
    esac
    echo "fuzz-smoke: $target, toolchain $toolchain, ${secs}s, corpus $(ls "$corpus" | wc -l) files"
    # -a: debug assertions and overflow checks, so arithmetic overflow in the parser is a crash.
    # shellcheck disable=SC2046
    if cargo $(tc "$toolchain") fuzz run --fuzz-dir fuzz -a "$target" "$corpus" -- \
        -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        "${extra[@]}"; then
        echo "fuzz-smoke: $target: no crash in ${secs}s"
    else
        echo "fuzz-smoke: $target FAILED; failing input(s), see fuzz/regressions/README.md:" >&2
        ls -l "fuzz/artifacts/$target/" >&2 || true
        return 1
    fi
}

# Built once, then every target fuzzed at once: libFuzzer keeps one core busy per target.
for target in "${targets[@]}"; do
    # shellcheck disable=SC2046
    cargo $(tc "$toolchain") fuzz build --fuzz-dir fuzz -a "$target"
done
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
pids=()
for target in "${targets[@]}"; do
    fuzz_one "$target" >"$logs/$target.log" 2>&1 &
    pids+=($!)
done
failed=0
for i in "${!targets[@]}"; do
    wait "${pids[$i]}" || failed=1
    cat "$logs/${targets[$i]}.log"
done
exit "$failed"
