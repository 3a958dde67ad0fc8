//! 32-bit glibc's time64 entry points. A program built with `_TIME_BITS=64` calls these
//! instead of the plain names; their structures have the kernel's 64-bit layout.

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

/// `__clock_getres64`.
///
/// # Safety
/// `res` is NULL or writable for a `struct __timespec64`.
#[no_mangle]
pub unsafe extern "C" fn __clock_getres64(clock: libc::clockid_t, res: *mut Timespec) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { abi::clock_getres64(clock, res) }
}

/// `__gettimeofday64`.
///
/// # Safety
/// `tv` is NULL or writable for a `struct __timeval64`; `tz` NULL or a `struct timezone`.
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
