//! A seccomp filter that denies the time system calls (clock_gettime, clock_gettime64,
//! gettimeofday, time) with `EPERM`: under it, whatever still reads the time was served in
//! user space. x86_64 and aarch64 only (the filter names their system call numbers).

/// The audit architecture the filter accepts; other ABIs' calls are killed.
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

/// Syscall numbers denied with EPERM. 403 is clock_gettime64 of the 32-bit ABIs; it is no
/// syscall on 64-bit ones, but listing it keeps the filter the same everywhere.
#[cfg(target_arch = "x86_64")]
const DENIED: &[u32] = &[
    libc::SYS_clock_gettime as u32,
    403,
    libc::SYS_gettimeofday as u32,
    libc::SYS_time as u32,
];
#[cfg(target_arch = "aarch64")]
const DENIED: &[u32] = &[
    libc::SYS_clock_gettime as u32,
    403,
    libc::SYS_gettimeofday as u32,
];

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
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
            jump(super::AUDIT_ARCH, 1, 0),
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
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn install_filter() {
    let n = DENIED.len() as u8;
    let mut prog = bpf::native_call();
    for (i, &nr) in DENIED.iter().enumerate() {
        // Match: jump over the remaining tests and the ALLOW to the ERRNO return.
        prog.push(bpf::jump(nr, n - i as u8, 0));
    }
    prog.push(bpf::ret(libc::SECCOMP_RET_ALLOW));
    prog.push(bpf::ret(libc::SECCOMP_RET_ERRNO | libc::EPERM as u32));
    bpf::install(prog, libc::SECCOMP_FILTER_FLAG_TSYNC);
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn install_filter() {}

/// Installs, on the calling thread only (other threads of the test harness keep running
/// unfiltered), a filter that kills the process on every system call but `allowed`: a
/// sandbox's allowlist whose default action kills (systemd's `SystemCallFilter=`).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
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

/// No filter is written for this architecture: the child says so as an emulator without
/// seccomp does, and its parent skips (it checks the architecture before it runs one).
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn install_kill_allowlist(_allowed: &[libc::c_long]) {
    println!("SECCOMP_UNSUPPORTED");
    std::process::exit(0);
}
