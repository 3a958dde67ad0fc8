//! The C library's own `time_t`, `struct timespec` and `struct timeval`, as its headers
//! define them for the programs that include `vdsotime.h`, and the [`crate::abi`] functions that
//! fill them.
//!
//! They are the `libc` crate's everywhere but on 32-bit musl: musl 1.2 made `time_t` 64-bit
//! there (`struct timespec` is `{ int64 tv_sec; long tv_nsec; int pad; }` with the padding
//! on the side that makes it the kernel's 64-bit timespec for either byte order, and
//! `struct timeval` two int64), while the `libc` crate still describes musl 1.1's 32-bit
//! types unless built with `RUST_LIBC_UNSTABLE_MUSL_V1_2_3`. Those 32-bit types remain the
//! ABI of musl's exported compat names (`clock_gettime` for programs built against 1.1),
//! which is why the preload keeps using them for the plain names.

// The `libc` crate deprecates musl's `time_t` for being musl 1.1's 32-bit one; on 64-bit
// musl it is the 64-bit one these functions mean (32-bit musl 1.2's is below).
#![cfg_attr(target_env = "musl", allow(deprecated))]

#[cfg(not(all(target_env = "musl", target_pointer_width = "32")))]
pub use crate::abi::{clock_getres, clock_gettime, gettimeofday, time};
#[cfg(not(all(target_env = "musl", target_pointer_width = "32")))]
pub use libc::{time_t, timespec, timeval};

#[cfg(all(target_env = "musl", target_pointer_width = "32"))]
pub use musl_time64::*;

#[cfg(all(target_env = "musl", target_pointer_width = "32"))]
mod musl_time64 {
    use core::ffi::{c_int, c_void};

    use crate::abi;

    /// musl 1.2's `time_t`.
    #[allow(non_camel_case_types)]
    pub type time_t = i64;
    /// Layout-compatible with musl 1.2's `struct timespec` as a destination: 16 bytes,
    /// seconds at 0, nanoseconds (a `long`) at 8 for little-endian and at 12 for big-endian,
    /// the rest padding, which the 64-bit store of a value below 10^9 fills with zeros.
    #[allow(non_camel_case_types)]
    pub type timespec = vdsotime::Timespec;
    /// musl 1.2's `struct timeval`: two 64-bit fields.
    #[allow(non_camel_case_types)]
    pub type timeval = vdsotime::Timeval;

    /// `clock_gettime` into musl 1.2's `struct timespec`.
    ///
    /// # Safety
    /// `ts` is NULL or writable for a `struct timespec`.
    pub unsafe fn clock_gettime(clock: c_int, ts: *mut timespec) -> c_int {
        // SAFETY: forwarded caller contract; the layouts agree (module docs).
        unsafe { abi::clock_gettime64(clock, ts) }
    }

    /// `clock_getres` into musl 1.2's `struct timespec`; `res` may be NULL.
    ///
    /// # Safety
    /// `res` is NULL or writable for a `struct timespec`.
    pub unsafe fn clock_getres(clock: c_int, res: *mut timespec) -> c_int {
        // SAFETY: as above.
        unsafe { abi::clock_getres64(clock, res) }
    }

    /// `gettimeofday` into musl 1.2's `struct timeval`.
    ///
    /// # Safety
    /// `tv` is NULL or writable for a `struct timeval`; `tz` NULL or a `struct timezone`.
    pub unsafe fn gettimeofday(tv: *mut timeval, tz: *mut c_void) -> c_int {
        // SAFETY: as above.
        unsafe { abi::gettimeofday64(tv, tz) }
    }

    /// `time` with musl 1.2's 64-bit `time_t`.
    ///
    /// # Safety
    /// `t` is NULL or writable for a `time_t`.
    pub unsafe fn time(t: *mut time_t) -> time_t {
        // SAFETY: forwarded caller contract.
        unsafe { abi::time64(t) }
    }
}
