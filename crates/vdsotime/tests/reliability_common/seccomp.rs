//! The seccomp filters of the tests: one that denies the time system calls (clock_gettime,
//! clock_gettime64, gettimeofday, time) with `EPERM`, under which whatever still reads the
//! time was served in user space; and an allowlist whose default action kills, a sandbox's.
//! The per-architecture facts are [`ARCH`]: the filter is written for every architecture
//! the crate runs on (loongarch64 aside, which no machine runs).
//!
//! `seccomp_data` starts with `nr` (offset 0) and `arch` (offset 4), both 32-bit: BPF_W
//! loads read them in the machine's byte order, so the same offsets hold on big-endian
//! s390x (only the 64-bit fields, the arguments, would need care there).

/// One architecture's facts: the audit architecture its native system calls carry (a call
/// of another ABI, i386 on x86_64 or arm on arm64, is killed), and the numbers of its time
/// system calls in that ABI, from the kernel's system call tables (spelled out: the `libc`
/// crate lacks some of them on 32-bit targets; [`_SAME_AS_LIBC`] checks the others).
struct Arch {
    audit: u32,
    clock_gettime: u32,
    /// The 32-bit ABIs' clock_gettime with 64-bit seconds.
    clock_gettime64: Option<u32>,
    gettimeofday: u32,
    /// Not in the aarch64, arm EABI, riscv64 and s390x ABIs.
    time: Option<u32>,
}

#[cfg(target_arch = "x86_64")]
const ARCH: Arch = Arch {
    audit: 0xC000_003E, // AUDIT_ARCH_X86_64
    clock_gettime: 228,
    clock_gettime64: None,
    gettimeofday: 96,
    time: Some(201),
};
#[cfg(target_arch = "x86")]
const ARCH: Arch = Arch {
    audit: 0x4000_0003, // AUDIT_ARCH_I386
    clock_gettime: 265,
    clock_gettime64: Some(403),
    gettimeofday: 78,
    time: Some(13),
};
#[cfg(target_arch = "aarch64")]
const ARCH: Arch = Arch {
    audit: 0xC000_00B7, // AUDIT_ARCH_AARCH64
    clock_gettime: 113,
    clock_gettime64: None,
    gettimeofday: 169,
    time: None,
};
#[cfg(target_arch = "arm")]
const ARCH: Arch = Arch {
    audit: 0x4000_0028, // AUDIT_ARCH_ARM (EABI, little-endian)
    clock_gettime: 263,
    clock_gettime64: Some(403),
    gettimeofday: 78,
    time: None,
};
#[cfg(target_arch = "riscv64")]
const ARCH: Arch = Arch {
    audit: 0xC000_00F3, // AUDIT_ARCH_RISCV64
    clock_gettime: 113,
    clock_gettime64: None,
    gettimeofday: 169,
    time: None,
};
#[cfg(target_arch = "s390x")]
const ARCH: Arch = Arch {
    audit: 0x8000_0016, // AUDIT_ARCH_S390X (big-endian: no LE bit)
    clock_gettime: 260,
    clock_gettime64: None,
    gettimeofday: 78,
    time: None,
};
#[cfg(all(target_arch = "powerpc64", target_endian = "little"))]
const ARCH: Arch = Arch {
    audit: 0xC000_0015, // AUDIT_ARCH_PPC64LE
    clock_gettime: 246,
    clock_gettime64: None,
    gettimeofday: 78,
    time: Some(13),
};

/// The numbers the `libc` crate has for every target agree with the table.
const _SAME_AS_LIBC: () = assert!(
    ARCH.clock_gettime as libc::c_long == libc::SYS_clock_gettime
        && ARCH.gettimeofday as libc::c_long == libc::SYS_gettimeofday
);

/// The time system calls the EPERM filter denies.
fn time_calls() -> Vec<u32> {
    let mut calls = vec![ARCH.clock_gettime, ARCH.gettimeofday];
    calls.extend(ARCH.clock_gettime64);
    calls.extend(ARCH.time);
    calls
}

mod bpf {
    use libc::{sock_filter, BPF_ABS, BPF_JEQ, BPF_JMP, BPF_K, BPF_LD, BPF_RET, BPF_W};

    pub fn stmt(code: u32, k: u32) -> sock_filter {
        sock_filter {
            code: code as u16,
            jt: 0,
            jf: 0,
            k,
        }
    }

    pub fn jump(k: u32, jt: u8, jf: u8) -> sock_filter {
        sock_filter {
            code: (BPF_JMP | BPF_JEQ | BPF_K) as u16,
            jt,
            jf,
            k,
        }
    }

    pub fn ret(k: u32) -> sock_filter {
        stmt(BPF_RET | BPF_K, k)
    }

    /// Kills a call of another ABI, then loads the system call's number.
    pub fn native_call() -> Vec<sock_filter> {
        vec![
            // offsetof(struct seccomp_data, arch) == 4, nr == 0.
            stmt(BPF_LD | BPF_W | BPF_ABS, 4),
            jump(super::ARCH.audit, 1, 0),
            ret(libc::SECCOMP_RET_KILL_PROCESS),
            stmt(BPF_LD | BPF_W | BPF_ABS, 0),
        ]
    }

    /// Installs `prog` after PR_SET_NO_NEW_PRIVS, on every thread with `flags`
    /// SECCOMP_FILTER_FLAG_TSYNC, else on this one; under QEMU user mode, which cannot
    /// filter, prints `SECCOMP_UNSUPPORTED` and exits the (child) process with success.
    pub fn install(mut prog: Vec<sock_filter>, flags: libc::c_ulong) {
        let fprog = libc::sock_fprog {
            len: prog.len() as u16,
            filter: prog.as_mut_ptr(),
        };
        // SAFETY: plain prctl call with integer arguments.
        let r = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
        assert_eq!(
            r,
            0,
            "PR_SET_NO_NEW_PRIVS: {}",
            std::io::Error::last_os_error()
        );
        // SAFETY: fprog points to a valid BPF program that outlives the call.
        let r = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                flags,
                &fprog as *const libc::sock_fprog,
            )
        };
        let err = std::io::Error::last_os_error();
        // QEMU user mode cannot filter its guest's syscalls and refuses with ENOSYS.
        if r != 0
            && err.raw_os_error() == Some(libc::ENOSYS)
            && std::env::var_os("VDSOTIME_EMULATOR").is_some()
        {
            println!(
                "SECCOMP_UNSUPPORTED by {:?}",
                std::env::var_os("VDSOTIME_EMULATOR")
            );
            std::process::exit(0);
        }
        assert_eq!(r, 0, "seccomp(SET_MODE_FILTER): {err}");
    }
}

/// Installs the filter on every thread of the process (the test harness may have more
/// than one); under QEMU user mode, see [`bpf::install`].
pub fn install_filter() {
    let denied = time_calls();
    let n = denied.len() as u8;
    let mut prog = bpf::native_call();
    for (i, &nr) in denied.iter().enumerate() {
        // Match: jump over the remaining tests and the ALLOW to the ERRNO return.
        prog.push(bpf::jump(nr, n - i as u8, 0));
    }
    prog.push(bpf::ret(libc::SECCOMP_RET_ALLOW));
    prog.push(bpf::ret(libc::SECCOMP_RET_ERRNO | libc::EPERM as u32));
    bpf::install(prog, libc::SECCOMP_FILTER_FLAG_TSYNC);
}

/// Installs, on the calling thread only (other threads of the test harness keep running
/// unfiltered), a filter that kills the process on every system call but `allowed`: a
/// sandbox's allowlist whose default action kills (systemd's `SystemCallFilter=`).
pub fn install_kill_allowlist(allowed: &[libc::c_long]) {
    let n = allowed.len() as u8;
    let mut prog = bpf::native_call();
    for (i, &nr) in allowed.iter().enumerate() {
        // Match: jump over the remaining tests and the KILL to the ALLOW return.
        prog.push(bpf::jump(nr as u32, n - i as u8, 0));
    }
    prog.push(bpf::ret(libc::SECCOMP_RET_KILL_PROCESS));
    prog.push(bpf::ret(libc::SECCOMP_RET_ALLOW));
    bpf::install(prog, 0);
}
