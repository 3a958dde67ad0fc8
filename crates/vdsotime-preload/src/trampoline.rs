//! `time` and `gettimeofday` as one indirect jump each, on x86-64 (the one architecture
//! this runs on here; elsewhere they are the plain wrappers).
//!
//! glibc binds its own `time` and `gettimeofday` to the vDSO's symbols through IFUNC
//! resolvers, so a call is the program's PLT jump and the vDSO. An LD_PRELOAD library
//! cannot do the same: libraries loaded after it are relocated before it, and glibc then
//! prints "Relink ... for IFUNC symbol" into the output of bash, ssh, curl, gpg and
//! openssl. So each name here is a single `jmp [target]`, the target a word of this
//! library read PC-relative (no GOT): the plain wrapper until the constructor has
//! resolved the vDSO, then the vDSO's own function (or the core's entry for `time`). A
//! call costs glibc's plus that one jump.

// The `libc` crate deprecates musl's `time_t` for being musl 1.1's 32-bit one; on 64-bit
// musl it is the 64-bit one these functions mean (ctypes.rs has 32-bit musl 1.2's).
#![cfg_attr(target_env = "musl", allow(deprecated))]

use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicPtr, Ordering::Relaxed};

use crate::abi;

/// Where `time` jumps: [`time_wrapper`] until [`bind`] runs.
static TIME: AtomicPtr<()> = AtomicPtr::new(time_wrapper as *mut ());
/// Where `gettimeofday` jumps: [`gettimeofday_wrapper`] until [`bind`] runs.
static GETTIMEOFDAY: AtomicPtr<()> = AtomicPtr::new(gettimeofday_wrapper as *mut ());

extern "C" fn time_wrapper(t: *mut libc::time_t) -> libc::time_t {
    // SAFETY: the C caller's contract: `t` is NULL or writable.
    unsafe { abi::time(t) }
}

extern "C" fn gettimeofday_wrapper(tv: *mut libc::timeval, tz: *mut c_void) -> c_int {
    // SAFETY: the C caller's contract: each pointer NULL or writable.
    unsafe { abi::gettimeofday(tv, tz) }
}

/// Points the jumps at the vDSO; from the library's constructor. The core's `time` entry
/// has `time`'s C meaning on 64-bit targets; the vDSO's `gettimeofday` is used only where
/// it can be called as is (it cannot fail but by faulting), else the wrapper stays.
pub fn bind() {
    TIME.store(vdsotime::raw::time_entry() as *mut (), Relaxed);
    if let Some(vdso) = vdsotime::raw::gettimeofday() {
        GETTIMEOFDAY.store(vdso as *mut (), Relaxed);
    }
}

/// `time(2)`; `t` may be NULL.
///
/// # Safety
/// `t` is NULL or writable for a `time_t`.
#[unsafe(naked)]
#[no_mangle]
pub unsafe extern "C" fn time(t: *mut libc::time_t) -> libc::time_t {
    jump!(TIME)
}

/// `gettimeofday(2)`; either pointer may be NULL, `tz` is filled as the kernel does.
///
/// # Safety
/// `tv` is NULL or writable for a `struct timeval`; `tz` is NULL or writable for a
/// `struct timezone`.
#[unsafe(naked)]
#[no_mangle]
pub unsafe extern "C" fn gettimeofday(tv: *mut libc::timeval, tz: *mut c_void) -> c_int {
    jump!(GETTIMEOFDAY)
}

/// The body of a trampoline: an indirect jump through `$target`, arguments untouched.
macro_rules! jump {
    ($target:ident) => {{
        core::arch::naked_asm!("jmp qword ptr [rip + {t}]", t = sym $target);
    }};
}
use jump;
