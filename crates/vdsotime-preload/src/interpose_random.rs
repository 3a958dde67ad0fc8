//! `getrandom` and `getentropy` under their libc names, so that a preloaded program's
//! random bytes (Python's `os.urandom`, OpenSSL's seeding through `getentropy`) come from
//! the vDSO on a C library that does not use it (glibc before 2.41, musl). Each is one
//! call into [`crate::abi`], the code behind libvdsotime's `vdsotime_*` functions.
//!
//! A buffer the program cannot write (read-only memory) is written by the vDSO from user
//! space, so the program gets SIGSEGV, where glibc's own `getrandom` before 2.41 (the system
//! call) returned -1 with `EFAULT`; glibc 2.41 and later, which use the vDSO themselves,
//! behave as the preload does. Without a vDSO `getrandom` the system call still says `EFAULT`.

use core::ffi::{c_int, c_uint, c_void};

use crate::abi;

/// `getrandom(2)`.
///
/// # Safety
/// `buf` is NULL or writable for `buflen` bytes.
#[no_mangle]
pub unsafe extern "C" fn getrandom(buf: *mut c_void, buflen: usize, flags: c_uint) -> isize {
    // SAFETY: forwarded caller contract.
    unsafe { abi::getrandom(buf, buflen, flags) }
}

/// `getentropy(3)`.
///
/// # Safety
/// `buf` is NULL or writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn getentropy(buf: *mut c_void, len: usize) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { abi::getentropy(buf, len) }
}
