//! The libc names this library defines, so that the dynamic linker binds a preloaded
//! program's calls here instead of to the C library. Each is one call into
//! [`crate::abi`], the code behind libvdsotime's `vdsotime_*` functions. The names are
//! listed in [`crate::exports`].

// The plain names keep the `libc` crate's types, which on 32-bit musl are musl 1.1's time32
// ABI (deprecated there), the ABI of musl's own compat exports; time64.rs has musl 1.2's.
#![cfg_attr(target_env = "musl", allow(deprecated))]

use core::ffi::{c_int, c_uint};

use crate::abi;

/// `clock_gettime(3)`; a NULL `ts` gives EFAULT as with the system call.
///
/// # Safety
/// `ts` is NULL or writable for a `struct timespec`.
#[no_mangle]
pub unsafe extern "C" fn clock_gettime(clock: libc::clockid_t, ts: *mut libc::timespec) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { abi::clock_gettime(clock, ts) }
}

/// `clock_getres(3)`; `res` may be NULL.
///
/// # Safety
/// `res` is NULL or writable for a `struct timespec`.
#[no_mangle]
pub unsafe extern "C" fn clock_getres(clock: libc::clockid_t, res: *mut libc::timespec) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { abi::clock_getres(clock, res) }
}

#[cfg(not(target_arch = "x86_64"))]
/// `gettimeofday(2)`; either pointer may be NULL, `tz` is filled as the kernel does.
///
/// # Safety
/// `tv` is NULL or writable for a `struct timeval`; `tz` is NULL or writable for a
/// `struct timezone`.
#[no_mangle]
pub unsafe extern "C" fn gettimeofday(tv: *mut libc::timeval, tz: *mut core::ffi::c_void) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { abi::gettimeofday(tv, tz) }
}

#[cfg(not(target_arch = "x86_64"))]
/// `time(2)`; `t` may be NULL.
///
/// # Safety
/// `t` is NULL or writable for a `time_t`.
#[no_mangle]
pub unsafe extern "C" fn time(t: *mut libc::time_t) -> libc::time_t {
    // SAFETY: forwarded caller contract.
    unsafe { abi::time(t) }
}

/// `getcpu(3)` (glibc 2.29+); either pointer may be NULL.
///
/// # Safety
/// `cpu` and `node` are each NULL or writable for an `unsigned int`.
#[no_mangle]
pub unsafe extern "C" fn getcpu(cpu: *mut c_uint, node: *mut c_uint) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { abi::getcpu(cpu, node) }
}

/// `sched_getcpu(3)`: from glibc's rseq area when glibc registered one (as glibc does),
/// else through the vDSO.
#[no_mangle]
pub extern "C" fn sched_getcpu() -> c_int {
    abi::sched_getcpu()
}
