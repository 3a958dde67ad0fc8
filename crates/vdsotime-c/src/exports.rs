//! The exported C symbols of libvdsotime, one thin wrapper each over [`crate::abi`].
//! Their declarations are `include/vdsotime.h`; a test checks the two agree.

// The `libc` crate deprecates musl's `time_t` for being musl 1.1's 32-bit one; on 64-bit
// musl it is the 64-bit one these functions mean (ctypes.rs has 32-bit musl 1.2's).
#![cfg_attr(target_env = "musl", allow(deprecated))]

use core::ffi::{c_int, c_uint, c_void};

use vdsotime::Timespec;

use crate::{abi, ctypes};

crate::load::at_load!();

/// `clock_gettime` with the C library's `struct timespec`.
///
/// # Safety
/// `ts` is NULL (EFAULT) or writable for a `struct timespec`.
#[no_mangle]
pub unsafe extern "C" fn vdsotime_clock_gettime(
    clock: libc::clockid_t,
    ts: *mut ctypes::timespec,
) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { ctypes::clock_gettime(clock, ts) }
}

/// `clock_getres` with the C library's `struct timespec`.
///
/// # Safety
/// `res` is NULL or writable for a `struct timespec`.
#[no_mangle]
pub unsafe extern "C" fn vdsotime_clock_getres(
    clock: libc::clockid_t,
    res: *mut ctypes::timespec,
) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { ctypes::clock_getres(clock, res) }
}

#[cfg(not(all(target_env = "gnu", target_arch = "x86_64")))]
/// `gettimeofday` with the C library's `struct timeval`.
///
/// # Safety
/// `tv` is NULL or writable for a `struct timeval`; `tz` is NULL or writable for a
/// `struct timezone`.
#[no_mangle]
pub unsafe extern "C" fn vdsotime_gettimeofday(
    tv: *mut ctypes::timeval,
    tz: *mut core::ffi::c_void,
) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { ctypes::gettimeofday(tv, tz) }
}

#[cfg(not(all(target_env = "gnu", target_arch = "x86_64")))]
/// `time` with the C library's `time_t`.
///
/// # Safety
/// `t` is NULL or writable for a `time_t`.
#[no_mangle]
pub unsafe extern "C" fn vdsotime_time(t: *mut ctypes::time_t) -> ctypes::time_t {
    // SAFETY: forwarded caller contract.
    unsafe { ctypes::time(t) }
}

/// `getcpu`.
///
/// # Safety
/// `cpu` and `node` are each NULL or writable for an `unsigned int`.
#[no_mangle]
pub unsafe extern "C" fn vdsotime_getcpu(cpu: *mut c_uint, node: *mut c_uint) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { abi::getcpu(cpu, node) }
}

/// Does now what each function's first call would do (finds the vDSO, makes the one
/// system call that confirms it is mapped, binds every function): call it before a
/// seccomp sandbox forbids that system call. See [`vdsotime::init`].
#[no_mangle]
pub extern "C" fn vdsotime_init() {
    vdsotime::init();
}

/// `sched_getcpu`: the current CPU, or -1 with `errno`.
#[no_mangle]
pub extern "C" fn vdsotime_sched_getcpu() -> c_int {
    abi::sched_getcpu()
}

/// `clock_gettime` with 64-bit seconds on every target.
///
/// # Safety
/// `ts` is NULL (EFAULT) or writable for a `struct vdsotime_timespec64`.
#[no_mangle]
pub unsafe extern "C" fn vdsotime_clock_gettime64(
    clock: libc::clockid_t,
    ts: *mut Timespec,
) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { abi::clock_gettime64(clock, ts) }
}

/// `clock_getres` with 64-bit seconds on every target.
///
/// # Safety
/// `res` is NULL or writable for a `struct vdsotime_timespec64`.
#[no_mangle]
pub unsafe extern "C" fn vdsotime_clock_getres64(
    clock: libc::clockid_t,
    res: *mut Timespec,
) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { abi::clock_getres64(clock, res) }
}

#[cfg(not(all(target_env = "gnu", target_arch = "x86_64")))]
/// `gettimeofday` with 64-bit fields on every target.
///
/// # Safety
/// `tv` is NULL or writable for a `struct vdsotime_timeval64`; `tz` is NULL or writable for a
/// `struct timezone`.
#[no_mangle]
pub unsafe extern "C" fn vdsotime_gettimeofday64(
    tv: *mut vdsotime::Timeval,
    tz: *mut core::ffi::c_void,
) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { abi::gettimeofday64(tv, tz) }
}

#[cfg(not(all(target_env = "gnu", target_arch = "x86_64")))]
/// `time` with a 64-bit result on every target.
///
/// # Safety
/// `t` is NULL or writable for an `int64_t`.
#[no_mangle]
pub unsafe extern "C" fn vdsotime_time64(t: *mut i64) -> i64 {
    // SAFETY: forwarded caller contract.
    unsafe { abi::time64(t) }
}

/// `getrandom(2)`: up to `buflen` random bytes, from the vDSO where the kernel has it.
///
/// # Safety
/// `buf` is NULL or writable for `buflen` bytes.
#[no_mangle]
pub unsafe extern "C" fn vdsotime_getrandom(
    buf: *mut c_void,
    buflen: usize,
    flags: c_uint,
) -> isize {
    // SAFETY: forwarded caller contract.
    unsafe { abi::getrandom(buf, buflen, flags) }
}

/// `getentropy(3)`: exactly `len` (at most 256) random bytes.
///
/// # Safety
/// `buf` is NULL or writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn vdsotime_getentropy(buf: *mut c_void, len: usize) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { abi::getentropy(buf, len) }
}
