#!/usr/bin/env bash
# Runs every test binary of the core crate under valgrind (memcheck).
#
#   scripts/reliability/valgrind.sh [EXTRA TEST-HARNESS ARGS...]
#
# Valgrind hides the vDSO from the program (AT_SYSINFO_EHDR is 0), so this is the
# "no vDSO" run: every call must take the syscall path and still pass, with no memory
# error (--error-exitcode=1). VDSOTIME_EXPECT_NO_VDSO=1 tells the tests (reliability_novdso
# checks that vdsotime::vdso() is None). Children that tests spawn run under valgrind too
# (--trace-children=yes), so they also have no vDSO. Tests whose children need unshare,
# seccomp or a 64-thread signal storm, and the heavy parser-mutation loops (30x slower under
# valgrind), are skipped here by name; they run natively in `cargo test`. Add more skips with VDSOTIME_VALGRIND_SKIP="a b".
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"

if ! command -v valgrind >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "valgrind.sh: installing valgrind"
    apt-get update -qq && apt-get install -y -qq valgrind
fi
if ! command -v valgrind >/dev/null 2>&1; then
    # The convention of tests/support/skip.rs: a visible skip, or a failure where
    # VDSOTIME_REQUIRE names the requirement.
    required=",${VDSOTIME_REQUIRE:-},"
    case "${required//[[:space:]]/}" in
        *,valgrind,*)
            echo "valgrind.sh: valgrind is required by VDSOTIME_REQUIRE but not installed" >&2
            exit 1
            ;;
    esac
    echo "SKIP valgrind.sh: valgrind is not installed and cannot be installed here (needs valgrind)" >&2
    exit 0
fi

skip_tests=(
    clocks_inside_a_time_namespace       # reliability_timens: unshare child
    time_syscalls_forbidden_by_seccomp   # reliability_seccomp: seccomp child
    threads_and_signals_on_first_use     # reliability_stress: 64-thread signal-storm child
    every_single_byte_mutation           # reliability_mutation: ~70k parses
    random_mutations                     # reliability_mutation: proptest
    every_truncation_of_the_real_images  # reliability_badinput: ~15k parses
    failed_syscalls_are_not_repeated     # syscall_count: bad pointers on purpose (memcheck flags them)
    getrandom_syscalls_counted_by_strace_in_a_time_namespace  # getrandom_syscalls: unshare child
    a_request_past_the_kernels_limit_is_cut_where_the_kernel_cuts  # getrandom_parity: 2 GiB writes
    no_repeated_block_and_uniform_bytes  # getrandom_quality: 2 x 10^6 draws, 64 MB sorted
)
# shellcheck disable=SC2206
skip_tests+=(${VDSOTIME_VALGRIND_SKIP:-})
skip_args=()
for t in "${skip_tests[@]}"; do skip_args+=(--skip "$t"); done

echo "valgrind.sh: building the test binaries of -p vdsotime"
mapfile -t exes < <(
    cargo test -p vdsotime --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["executable"])
'
)
if [ "${#exes[@]}" -eq 0 ]; then
    echo "valgrind.sh: no test executables found (build failed?)" >&2
    cargo test -p vdsotime --no-run
    exit 1
fi

export VDSOTIME_EXPECT_NO_VDSO=1
# Memcheck runs a program's threads one at a time, so each binary keeps one core busy:
# two binaries run at once (VDSOTIME_VALGRIND_JOBS), each one's output printed whole when
# it ends.
jobs="${VDSOTIME_VALGRIND_JOBS:-2}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
run_one() {
    local exe=$1 log="$out/$(basename "$1")"
    if valgrind --quiet --error-exitcode=1 --trace-children=yes \
        --suppressions="$root/scripts/reliability/readable.supp" \
        "$exe" --test-threads=2 "${skip_args[@]}" "${extra[@]}" >"$log" 2>&1; then
        touch "$log.passed"
    fi
    {
        echo "=== valgrind $(basename "$exe")"
        cat "$log"
    }
}
extra=("$@")
running=0
for exe in "${exes[@]}"; do
    if [ "$running" -ge "$jobs" ]; then
        wait -n || true
        running=$((running - 1))
    fi
    run_one "$exe" &
    running=$((running + 1))
done
wait
failed=0
passed=0
for exe in "${exes[@]}"; do
    if [ -e "$out/$(basename "$exe").passed" ]; then
        passed=$((passed + 1))
    else
        echo "valgrind.sh: FAILED under valgrind: $exe" >&2
        failed=$((failed + 1))
    fi
done
echo "valgrind.sh: $passed of ${#exes[@]} test binaries passed under valgrind"
[ "$failed" -eq 0 ]
