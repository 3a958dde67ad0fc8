//! `vdsotime top` under a seccomp filter that denies `bpf()`, as a container's default
//! profile does, root and every capability kept: `auto` counts with perf and says that a
//! seccomp filter refused BPF (not a missing capability), and a BPF backend asked for by
//! name is refused with that reason and exit 1.

use std::os::unix::process::CommandExt;
use std::process::Command;

use crate::skip::skip;
use crate::top::{build_loop, traceable};
use crate::top_backends::{assert_counted_exactly, count_a_short_life};
use crate::{parts, scratch};

/// This architecture's `AUDIT_ARCH_*` value (linux/audit.h), which the filter checks
/// before it reads a system call number.
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: Option<u32> = Some(0xC000_003E);
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: Option<u32> = Some(0xC000_00B7);
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const AUDIT_ARCH: Option<u32> = None;

const fn stmt(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

const fn jump(code: u32, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    }
}

/// `cmd` made to run under a filter whose `bpf()` fails with EPERM and which allows
/// every other call; `None` (after a SKIP) on an architecture this test has no filter for.
fn deny_bpf(test: &str, mut cmd: Command) -> Option<Command> {
    let Some(arch) = AUDIT_ARCH else {
        skip(
            test,
            "bpf",
            "no seccomp filter written for this architecture",
        );
        return None;
    };
    // Offsets in struct seccomp_data: nr at 0, arch at 4.
    let filter = [
        stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 4),
        jump(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K, arch, 1, 0),
        stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW),
        stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0),
        jump(
            libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K,
            libc::SYS_bpf as u32,
            0,
            1,
        ),
        stmt(
            libc::BPF_RET | libc::BPF_K,
            libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
        ),
        stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW),
    ];
    // SAFETY: the closure runs in the child between fork and exec and only calls prctl
    // with a program that lives in the closure (moved in, no allocation after the fork).
    unsafe {
        cmd.pre_exec(move || {
            let prog = libc::sock_fprog {
                len: filter.len() as u16,
                filter: filter.as_ptr().cast_mut(),
            };
            if libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &prog) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Some(cmd)
}

fn top_command(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vdsotime"));
    cmd.args(args);
    cmd
}

#[test]
fn bpf_denied_by_a_seccomp_filter_falls_back_to_perf_and_says_so() {
    const TEST: &str = "top_seccomp::bpf_denied_by_a_seccomp_filter_falls_back_to_perf_and_says_so";
    let dir = scratch("top-seccomp");
    if !traceable(TEST) {
        return;
    }
    let Some(exe) = build_loop(TEST, &dir) else {
        return;
    };
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip(TEST, "bpf", "not root: the backends need root here");
        return;
    }
    if deny_bpf(TEST, top_command(&[])).is_none() {
        return;
    }
    let make_top = |pid: u32| {
        let pid = pid.to_string();
        let args = ["top", "--once", "--duration", "3", "--json", "--pid", &pid];
        deny_bpf(TEST, top_command(&args)).expect("a filter for this architecture")
    };
    let (doc, pid) = count_a_short_life(make_top, "perf", &exe);
    assert_counted_exactly(&doc, pid, "perf");
    let reason = doc["backend_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("seccomp filter"), "{reason}");
    assert!(!reason.contains("BPF needs CAP_BPF"), "{reason}");
    for backend in ["tracepoint", "fentry"] {
        let args = ["top", "--once", "--duration", "0.5", "--backend", backend];
        let mut cmd = deny_bpf(TEST, top_command(&args)).expect("a filter");
        let (c, out, err) = parts(&crate::process::output(&mut cmd, crate::LIMIT));
        assert_eq!(c, 1, "{backend}: stdout:\n{out}\nstderr:\n{err}");
        assert!(
            err.contains("seccomp filter") && !err.contains("panicked"),
            "{backend}: {err}"
        );
    }
}
