//! The time64 entry points of 32-bit C libraries, which programs call instead of the plain
//! names: glibc's when built with `_TIME_BITS=64`, musl's always since 1.2 (its headers
//! redirect `clock_gettime` to `__clock_gettime64`, `clock_getres` to
//! `__clock_getres_time64`, `gettimeofday` to `__gettimeofday_time64`, `time` to `__time64`).
//! Their structures have the kernel's 64-bit layout (musl's `struct timespec` as a
//! destination, see vdsotime-c's `ctypes`).

use core::ffi::{c_int, c_void};

use crate::abi;
use vdsotime::{Timespec, Timeval};

/// `__clock_gettime64`.
///
/// # Safety
/// `ts` is NULL or writable for a `struct __timespec64`.
#[no_mangle]
pub unsafe extern "C" fn __clock_gettime64(clock: libc::clockid_t, ts: *mut Timespec) -> c_int {
    // SAFETY: forwarded caller contract; struct __timespec64 has Timespec's size and layout.
    unsafe { abi::clock_gettime64(clock, ts) }
}

/// glibc's `__clock_getres64`.
///
/// # Safety
/// `res` is NULL or writable for a `struct __timespec64`.
#[cfg(target_env = "gnu")]
#[no_mangle]
pub unsafe extern "C" fn __clock_getres64(clock: libc::clockid_t, res: *mut Timespec) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { abi::clock_getres64(clock, res) }
}

/// glibc's `__gettimeofday64`.
///
/// # Safety
/// `tv` is NULL or writable for a `struct __timeval64`; `tz` NULL or a `struct timezone`.
#[cfg(target_env = "gnu")]
#[no_mangle]
pub unsafe extern "C" fn __gettimeofday64(tv: *mut Timeval, tz: *mut c_void) -> c_int {
    // SAFETY: forwarded caller contract; struct __timeval64 is two 64-bit fields.
    unsafe { abi::gettimeofday64(tv, tz) }
}

/// `__time64`.
///
/// # Safety
/// `t` is NULL or writable for a `__time64_t`.
#[no_mangle]
pub unsafe extern "C" fn __time64(t: *mut i64) -> i64 {
    // SAFETY: forwarded caller contract.
    unsafe { abi::time64(t) }
}

/// musl's `__clock_getres_time64`.
///
/// # Safety
/// `res` is NULL or writable for a `struct timespec` (64-bit `time_t`).
#[cfg(target_env = "musl")]
#[no_mangle]
pub unsafe extern "C" fn __clock_getres_time64(
    clock: libc::clockid_t,
    res: *mut Timespec,
) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { abi::clock_getres64(clock, res) }
}

/// musl's `__gettimeofday_time64`.
///
/// # Safety
/// `tv` is NULL or writable for a `struct timeval` (64-bit fields); `tz` NULL or a
/// `struct timezone`.
#[cfg(target_env = "musl")]
#[no_mangle]
pub unsafe extern "C" fn __gettimeofday_time64(tv: *mut Timeval, tz: *mut c_void) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { abi::gettimeofday64(tv, tz) }
}
