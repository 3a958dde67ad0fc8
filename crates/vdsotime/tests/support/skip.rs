//! A test that cannot run here says so: `SKIP <test>: <reason>` on standard error, and
//! passes. Where the environment variable `VDSOTIME_REQUIRE` names what is missing
//! (comma-separated, e.g. `timens,seccomp,strace,valgrind`), it fails instead: CI sets it
//! on the machine that must run everything, so nothing it relies on is skipped unseen.
//!
//! The line is written to the process's real standard error, not through `eprintln!`:
//! the test harness captures the print macros of passing tests, but not a direct write,
//! so the line shows in `cargo test`'s output, and `.ci/run` collects every `SKIP` line
//! into its summary. Shared by the core's tests and, through `#[path]`, the CLI's; the shell
//! scripts follow the same convention (`scripts/reliability/valgrind.sh`).

#![allow(dead_code)]

use std::fmt::Display;
use std::io::Write;

/// The environment variable naming the requirements that must not be skipped.
pub const REQUIRE_ENV: &str = "VDSOTIME_REQUIRE";

/// Every requirement a test may skip for, and what it means. `VDSOTIME_REQUIRE` may name
/// only these, so a misspelt name is an error rather than a requirement nothing checks.
pub const REQUIREMENTS: &[(&str, &str)] = &[
    (
        "vdso",
        "the process has a vDSO (valgrind, vdso=0 and old QEMU hide it)",
    ),
    (
        "help-tools",
        "jq, readelf, objdump and man: the commands the tool's --help examples pipe into",
    ),
    (
        "timens",
        "time namespaces: `unshare --time` works (Linux 5.6+, privilege)",
    ),
    (
        "seccomp",
        "seccomp filters can be installed (not under QEMU user mode)",
    ),
    ("strace", "strace is installed and can trace this process"),
    (
        "valgrind",
        "valgrind is installed (scripts/reliability/valgrind.sh)",
    ),
    (
        "affinity",
        "the process may pin itself to each CPU (sched_setaffinity)",
    ),
    ("getcpu", "the getcpu system call works"),
    (
        "auxclock",
        "auxiliary clocks (Linux 6.17+ with CONFIG_POSIX_AUX_CLOCKS) that the test, as root, \
         may enable, set and steer",
    ),
    (
        "glibc",
        "a glibc target (its pthread keys, rseq area, tunables)",
    ),
    (
        "glibc64",
        "a 64-bit glibc target (the C benchmark's set-up)",
    ),
    ("bits64", "a 64-bit process (2 GiB buffers)"),
    ("openssl", "the openssl command"),
    (
        "ptrace",
        "ptrace(2) may trace a child: the launcher that starts a program without \
         AT_SYSINFO_EHDR (x86 only; not under QEMU user mode)",
    ),
    (
        "musl",
        "x86-64 musl: musl-gcc (Debian's musl-tools) and Rust's x86_64-unknown-linux-musl \
         standard library",
    ),
    (
        "static-libc",
        "the C library's static archive (libc.a), for -static and -static-pie programs",
    ),
    (
        "systemd-analyze",
        "systemd-analyze (Debian's systemd), to verify the tool's systemd units",
    ),
    (
        "prometheus",
        "promtool, prometheus and prometheus-node-exporter (Debian's prometheus and \
         prometheus-node-exporter): the alert rules' tests and the fleet end-to-end test",
    ),
    (
        "vdso-unmap",
        "a process that can unmap its vDSO and go on making system calls: not on i386, \
         whose C library enters the kernel through the vDSO's __kernel_vsyscall",
    ),
    (
        "c++",
        "a C++ compiler (`c++`, Debian's g++) for the machine's own target: the C header \
         compiled as C++",
    ),
    (
        "vdso-clocksource",
        "the clocksource is one the vDSO reads (tsc, arch_sys_counter, \
         hyperv_clocksource_tsc_page), so that the clocks make no system call",
    ),
    (
        "tmpfs-mount",
        "mount(2) of a tmpfs (root): the doctor's install step against a full and a read-only \
         file system",
    ),
    (
        "mknod",
        "mknod(2) of a device node (root): the doctor's install step against /dev/zero's own \
         node",
    ),
    (
        "perf",
        "root or CAP_PERFMON: perf_event_open on the kernel's syscall tracepoints (vdsotime top)",
    ),
    (
        "pidns",
        "unshare --pid --fork --mount-proc (root): vdsotime top inside a PID namespace of \
         its own",
    ),
    (
        "bpf",
        "root with a kernel that loads BPF programs, and setpriv: vdsotime top's BPF backend and its fallback",
    ),
    (
        "fentry",
        "a kernel that loads and attaches fentry programs (BTF in /sys/kernel/btf/vmlinux, \
         Linux 5.5+ on x86_64, 6.4+ on aarch64, no security policy refusing tracing \
         programs): vdsotime top --backend fentry",
    ),
    (
        "i386-cc",
        "x86_64 with `cc -m32 -nostdlib` building a freestanding i386 program: vdsotime top \
         counting a 32-bit process's calls under its own numbers",
    ),
    (
        "libc-getrandom-syscall",
        "a C library whose getrandom() enters the kernel (glibc older than 2.41), for the \
         preload library to take over",
    ),
    (
        "native-cc",
        "`cc` builds for the target under test (not so under `cargo xtask cross`): the \
         README's C commands run as printed",
    ),
];

/// Whether `VDSOTIME_REQUIRE` names `requirement`. Panics on a name that is not in
/// [`REQUIREMENTS`], or if `requirement` itself is not.
pub fn required(requirement: &str) -> bool {
    let known = |name: &str| REQUIREMENTS.iter().any(|(n, _)| *n == name);
    assert!(known(requirement), "unknown requirement {requirement:?}");
    let list = std::env::var(REQUIRE_ENV).unwrap_or_default();
    let mut names = list.split(',').map(str::trim).filter(|n| !n.is_empty());
    names.any(|name| {
        assert!(
            known(name),
            "{REQUIRE_ENV}={list}: unknown requirement {name:?}; known: {:?}",
            REQUIREMENTS.iter().map(|(n, _)| n).collect::<Vec<_>>()
        );
        name == requirement
    })
}

/// Passes on the `SKIP` lines a child test process wrote to its (captured) standard
/// error, so they show like the parent's own.
pub fn relay(child_stderr: &str) {
    for line in child_stderr.lines().filter(|l| l.starts_with("SKIP ")) {
        let _ = std::io::stderr()
            .lock()
            .write_all(format!("{line}\n").as_bytes());
    }
}

/// `test` cannot run because `requirement` is missing, for `reason`: prints
/// `SKIP <test>: <reason>` where the harness does not hide it, or panics when
/// `VDSOTIME_REQUIRE` names the requirement. Use as `return skip(...)`.
pub fn skip(test: &str, requirement: &str, reason: impl Display) {
    assert!(
        !required(requirement),
        "{test}: {requirement} is required by {REQUIRE_ENV} but unavailable: {reason}"
    );
    let line = format!("SKIP {test}: {reason} (needs {requirement})\n");
    // One write of the whole line, so parallel tests cannot split it.
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}
