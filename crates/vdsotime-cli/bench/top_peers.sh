#!/usr/bin/env bash
# What `vdsotime top` and its peers cost the processes they watch (docs/top.md,
# "Overhead"): as root, installs the peers that are missing from Debian (bpftrace,
# linux-perf for perf, strace), then runs `cargo bench -p vdsotime-cli --bench
# top_overhead`. A peer that cannot be installed or run gets a `SKIP <peer>: <reason>` row
# from the bench; without root everything is skipped and the exit status is 0.
# The bench's environment variables (TOP_OVERHEAD_CALLS, _ROUNDS, ...) pass through.
set -euo pipefail
cd "$(dirname "$0")/../../.."

if [ "$(id -u)" != 0 ]; then
    echo "SKIP top_overhead: not root: vdsotime top and its peers need root"
    exit 0
fi

# command:package for each peer.
missing=()
for peer in bpftrace:bpftrace perf:linux-perf strace:strace; do
    command -v "${peer%%:*}" >/dev/null || missing+=("${peer#*:}")
done
if [ "${#missing[@]}" -gt 0 ]; then
    if command -v apt-get >/dev/null; then
        apt-get update -qq || echo "apt-get update failed: installing from the lists there are"
        for package in "${missing[@]}"; do
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" ||
                echo "SKIP $package: apt-get install $package failed"
        done
    else
        echo "SKIP ${missing[*]}: missing, and no apt-get to install them"
    fi
fi

# Debian's perf can be a wrapper that runs perf_X.Y for the running kernel's X.Y and
# refuses any other kernel: then the newest versioned binary is called directly.
if command -v perf >/dev/null && [ -z "${TOP_OVERHEAD_PERF:-}" ]; then
    if ! perf version >/dev/null 2>&1; then
        versioned=$(ls /usr/bin/perf_* 2>/dev/null | sort -V | tail -n 1 || true)
        if [ -n "$versioned" ]; then
            echo "perf refuses this kernel ($(uname -r)): using $versioned"
            export TOP_OVERHEAD_PERF=$versioned
        fi
    fi
fi
for tool in bpftrace "${TOP_OVERHEAD_PERF:-perf}" strace; do
    if command -v "$tool" >/dev/null; then
        printf '%s: %s\n' "$tool" "$("$tool" --version 2>&1 | head -n 1)"
    fi
done

exec cargo bench -p vdsotime-cli --bench top_overhead
