//! A seccomp filter that makes the time system calls fail with an errno of our
//! choosing, so a process can tell whether a vDSO call entered the kernel: if the
//! result is that errno, it did. Calls of another ABI than this build's (the audit
//! architecture in `seccomp_data`) kill the process, as the kernel's seccomp selftests
//! do, since their numbers would mean other calls.
//!
//! Depends on libc and linux-raw-sys only, so a test can include it by path.

use std::io;

use linux_raw_sys::general as nr;
use linux_raw_sys::ptrace as sc;

/// The audit architecture of this build's system calls, where a filter is written.
pub const AUDIT_ARCH: Option<u32> = audit_arch();

const fn audit_arch() -> Option<u32> {
    if cfg!(target_arch = "x86_64") {
        Some(sc::AUDIT_ARCH_X86_64)
    } else if cfg!(target_arch = "x86") {
        Some(sc::AUDIT_ARCH_I386)
    } else if cfg!(target_arch = "aarch64") {
        Some(sc::AUDIT_ARCH_AARCH64)
    } else if cfg!(all(target_arch = "arm", target_endian = "little")) {
        Some(sc::AUDIT_ARCH_ARM)
    } else if cfg!(target_arch = "riscv64") {
        Some(sc::AUDIT_ARCH_RISCV64)
    } else if cfg!(target_arch = "s390x") {
        Some(sc::AUDIT_ARCH_S390X)
    } else if cfg!(all(target_arch = "powerpc64", target_endian = "little")) {
        Some(sc::AUDIT_ARCH_PPC64LE)
    } else if cfg!(all(target_arch = "powerpc64", target_endian = "big")) {
        Some(sc::AUDIT_ARCH_PPC64)
    } else if cfg!(target_arch = "loongarch64") {
        Some(sc::AUDIT_ARCH_LOONGARCH64)
    } else {
        None
    }
}

/// The calls every architecture has.
const COMMON: &[u32] = &[
    nr::__NR_clock_gettime,
    nr::__NR_clock_getres,
    nr::__NR_gettimeofday,
    nr::__NR_getcpu,
    nr::__NR_getrandom,
];
/// The time64 calls of 32-bit architectures.
#[cfg(target_pointer_width = "32")]
const TIME64: &[u32] = &[nr::__NR_clock_gettime64, nr::__NR_clock_getres_time64];
#[cfg(not(target_pointer_width = "32"))]
const TIME64: &[u32] = &[];
/// `time`, where the architecture has it.
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "powerpc",
    target_arch = "powerpc64",
    target_arch = "mips"
))]
const TIME: &[u32] = &[nr::__NR_time];
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "powerpc",
    target_arch = "powerpc64",
    target_arch = "mips"
)))]
const TIME: &[u32] = &[];

/// Every system call a vDSO time, CPU or random function falls back to on this
/// architecture: the time32 and time64 ones on 32-bit targets, `time` where it exists.
pub fn time_syscalls() -> Vec<u32> {
    [COMMON, TIME64, TIME].concat()
}

/// Why no filter could be installed.
#[derive(Debug)]
pub enum Refused {
    /// No filter is written for this build's architecture.
    UnknownArch,
    /// `prctl(PR_SET_NO_NEW_PRIVS)` failed.
    NoNewPrivs(io::Error),
    /// `seccomp(SECCOMP_SET_MODE_FILTER)` failed (ENOSYS under QEMU user mode, EINVAL
    /// without CONFIG_SECCOMP_FILTER, EACCES/EPERM in some sandboxes).
    Seccomp(io::Error),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::UnknownArch => {
                f.write_str("no seccomp filter is written for this architecture")
            }
            Refused::NoNewPrivs(e) => write!(f, "prctl(PR_SET_NO_NEW_PRIVS) failed: {e}"),
            Refused::Seccomp(e) => write!(f, "seccomp(SECCOMP_SET_MODE_FILTER) failed: {e}"),
        }
    }
}

/// One classic-BPF instruction (`struct sock_filter`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct Insn {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

/// `struct sock_fprog`.
#[repr(C)]
#[derive(Debug)]
struct Prog {
    len: u16,
    filter: *const Insn,
}

const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const RET_K: u16 = 0x06; // BPF_RET | BPF_K
/// Offsets in `struct seccomp_data`.
const NR_OFFSET: u32 = 0;
const ARCH_OFFSET: u32 = 4;

const fn stmt(code: u16, k: u32) -> Insn {
    Insn {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

/// The program: wrong ABI → kill; a listed call → `errno`; anything else → allow.
fn program(arch: u32, denied: &[u32], errno: u16) -> Vec<Insn> {
    let mut p = vec![
        stmt(LD_W_ABS, ARCH_OFFSET),
        Insn {
            code: JEQ_K,
            jt: 1,
            jf: 0,
            k: arch,
        },
        stmt(RET_K, sc::SECCOMP_RET_KILL_PROCESS),
        stmt(LD_W_ABS, NR_OFFSET),
    ];
    for (i, &n) in denied.iter().enumerate() {
        // On a match, jump over the remaining tests and the ALLOW to the ERRNO return.
        let skip = u8::try_from(denied.len() - i).unwrap_or(u8::MAX);
        p.push(Insn {
            code: JEQ_K,
            jt: skip,
            jf: 0,
            k: n,
        });
    }
    p.push(stmt(RET_K, sc::SECCOMP_RET_ALLOW));
    p.push(stmt(RET_K, sc::SECCOMP_RET_ERRNO | u32::from(errno)));
    p
}

/// A filter ready to install: built (and allocated) before a fork, installed after.
#[derive(Debug)]
pub struct Filter {
    insns: Vec<Insn>,
}

impl Filter {
    /// A filter under which every call in `denied` fails with `errno` (at most 4095,
    /// the kernel's limit).
    pub fn new(denied: &[u32], errno: u16) -> Result<Filter, Refused> {
        let arch = AUDIT_ARCH.ok_or(Refused::UnknownArch)?;
        if denied.len() > 200 {
            return Err(Refused::Seccomp(io::Error::from_raw_os_error(libc::E2BIG)));
        }
        Ok(Filter {
            insns: program(arch, denied, errno),
        })
    }

    /// Installs the filter on the calling thread. Irreversible: call it in a child
    /// process made for the purpose. Needs no privilege (it sets no_new_privs first).
    /// Neither allocates nor locks, so a forked child may call it.
    pub fn install(&self) -> Result<(), Refused> {
        let prog = Prog {
            len: u16::try_from(self.insns.len()).unwrap_or(u16::MAX),
            filter: self.insns.as_ptr(),
        };
        // SAFETY: prctl with integer arguments only.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(Refused::NoNewPrivs(io::Error::last_os_error()));
        }
        // SAFETY: `prog` describes `insns`, a valid program that outlives the call (the
        // kernel copies it).
        let r = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                sc::SECCOMP_SET_MODE_FILTER,
                0,
                &prog as *const Prog,
            )
        };
        if r != 0 {
            return Err(Refused::Seccomp(io::Error::last_os_error()));
        }
        Ok(())
    }
}

impl Refused {
    /// The refusal as two integers, for a child to report through a pipe.
    pub fn encode(&self) -> (i32, i32) {
        let errno = |e: &io::Error| e.raw_os_error().unwrap_or(0);
        match self {
            Refused::UnknownArch => (1, 0),
            Refused::NoNewPrivs(e) => (2, errno(e)),
            Refused::Seccomp(e) => (3, errno(e)),
        }
    }

    /// The refusal [`Refused::encode`] gave these integers for.
    pub fn decode(stage: i32, errno: i32) -> Refused {
        let e = io::Error::from_raw_os_error(errno);
        match stage {
            1 => Refused::UnknownArch,
            2 => Refused::NoNewPrivs(e),
            _ => Refused::Seccomp(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_checks_the_arch_then_each_call() {
        let p = program(0xC000_003E, &[228, 96], 4000);
        assert_eq!(p.len(), 4 + 2 + 2);
        assert_eq!((p[0].code, p[0].k), (LD_W_ABS, ARCH_OFFSET));
        assert_eq!((p[1].k, p[1].jt, p[1].jf), (0xC000_003E, 1, 0));
        assert_eq!(p[2].k, sc::SECCOMP_RET_KILL_PROCESS);
        // The first test jumps over the second test and ALLOW to ERRNO, the second over ALLOW.
        assert_eq!((p[4].k, p[4].jt), (228, 2));
        assert_eq!((p[5].k, p[5].jt), (96, 1));
        assert_eq!(p[6].k, sc::SECCOMP_RET_ALLOW);
        assert_eq!(p[7].k, sc::SECCOMP_RET_ERRNO | 4000);
    }

    #[test]
    fn refusals_survive_the_pipe() {
        let r = Refused::Seccomp(io::Error::from_raw_os_error(libc::ENOSYS));
        let (stage, errno) = r.encode();
        assert_eq!(Refused::decode(stage, errno).to_string(), r.to_string());
        assert_eq!(Refused::decode(1, 0).encode(), (1, 0));
    }

    #[test]
    fn every_time_call_is_listed_once() {
        let v = time_syscalls();
        let mut d = v.clone();
        d.sort_unstable();
        d.dedup();
        assert_eq!(d.len(), v.len(), "{v:?}");
        assert!(v.contains(&nr::__NR_clock_gettime) && v.contains(&nr::__NR_getrandom));
    }
}
