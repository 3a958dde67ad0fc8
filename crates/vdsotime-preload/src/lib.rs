//! libvdsotime_preload.so: `LD_PRELOAD` it and a dynamically linked program's `clock_gettime`,
//! `clock_getres`, `gettimeofday`, `time`, `sched_getcpu` and `getcpu` (and on 32-bit glibc
//! their `__*64` time64 twins) are served by vdsotime: the vDSO when it can, the exact system
//! call otherwise. `getrandom` and `getentropy` are served by the vDSO's getrandom where
//! the kernel exports it (Linux 6.11+), one state per thread.
//!
//! The clock path is async-signal-safe and usable before `main`: the core resolves the vDSO
//! lazily and lock-free from the auxiliary vector, and nothing here allocates, locks, calls
//! `dlsym` or can panic. `VDSOTIME_PRELOAD_DEBUG` makes the library's ELF constructor report
//! what it bound and which path each function takes (module `debug`).

/// The C semantics behind the libc names: the same source file as libvdsotime's
/// `vdsotime_c::abi`, compiled into this crate (see Cargo.toml for why).
#[allow(dead_code)] // libvdsotime uses a few functions this library does not
#[path = "../../vdsotime-c/src/abi.rs"]
mod abi;
mod debug;
mod exports;
mod init;
mod interpose;
mod interpose_random;
#[cfg(target_pointer_width = "32")]
mod time64;
#[cfg(target_arch = "x86_64")]
mod trampoline;
