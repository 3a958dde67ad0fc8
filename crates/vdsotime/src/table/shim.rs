//! Functions that stand in an entry's slot when the vDSO symbol cannot be called as
//! it is: `time` from the coarse clock, time32 symbols on 32-bit targets (widened, and
//! asked of the syscall once they overflow, as far as `time32.rs` can tell), vDSOs that answer `ENOSYS` without asking
//! the kernel, and powerpc's asm call sequence. Each reads its symbol from the table
//! and uses the syscall if it finds none; none makes more than one system call.

#![allow(dead_code)] // which shims exist depends on the target

use super::{symbol, Slot};
use crate::syscall::{raw_clock_getres, raw_clock_gettime, raw_gettimeofday};
use crate::time32::widen;
use crate::{ClockId, Timespec, Timeval, Timezone};

/// `time` as the seconds of `CLOCK_REALTIME_COARSE`, which is the kernel's `time`.
///
/// # Safety
/// `t` must be null or valid for writes.
pub(super) unsafe extern "C" fn time_from_coarse(t: *mut i64) -> i64 {
    let secs = crate::clock_gettime(ClockId::REALTIME_COARSE).map_or(-1, |ts| ts.tv_sec);
    if !t.is_null() {
        // SAFETY: not null, so writable (caller).
        unsafe { t.write(secs) };
    }
    secs
}

/// `-ENOSYS`.
const ENOSYS: i32 = -(linux_raw_sys::errno::ENOSYS as i32);

/// Whether a vDSO result means "not served here, ask the kernel": `ENOSYS` on the
/// architectures whose old vDSOs said so instead of making the syscall themselves.
fn unserved(ret: i32) -> bool {
    ret == ENOSYS && crate::arch::NATIVE.enosys_means_unserved
}

/// The address of `slot`'s symbol, or `None`: the check every shim makes before it turns
/// the address into a function. The table binds a shim only beside a symbol it found, but
/// `init_from_image` may rebind the slots to an image without that symbol between a
/// caller's load of the entry and the shim's read of the symbol.
fn bound(slot: Slot) -> Option<usize> {
    match symbol(slot) {
        0 => None,
        address => Some(address),
    }
}

/// Calls `slot`'s symbol, a `ClockFn`, and asks `fallback` if it answers `ENOSYS` (or
/// if the slot has no symbol).
///
/// # Safety
/// `ts` must be valid for what the slot's function writes.
unsafe fn clock_enosys(slot: Slot, clock: i32, ts: *mut Timespec, fallback: super::ClockFn) -> i32 {
    let Some(address) = bound(slot) else {
        // SAFETY: forwarded from the caller.
        return unsafe { fallback(clock, ts) };
    };
    // SAFETY: the table binds these shims only to slots whose symbol it found, with
    // the C signature `ClockFn`; `address` is that symbol.
    let f = unsafe { core::mem::transmute::<usize, super::ClockFn>(address) };
    // SAFETY: forwarded from the caller.
    match unsafe { f(clock, ts) } {
        // SAFETY: forwarded from the caller.
        ret if unserved(ret) => unsafe { fallback(clock, ts) },
        ret => ret,
    }
}

/// # Safety
/// `ts` must be valid for writes.
pub(super) unsafe extern "C" fn clock_gettime_enosys(clock: i32, ts: *mut Timespec) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { clock_enosys(Slot::ClockGettime, clock, ts, raw_clock_gettime) }
}

/// # Safety
/// `ts` must be null or valid for writes.
pub(super) unsafe extern "C" fn clock_getres_enosys(clock: i32, ts: *mut Timespec) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { clock_enosys(Slot::ClockGetres, clock, ts, raw_clock_getres) }
}

/// # Safety
/// `tv` must be valid for writes; `tz` null or valid for writes.
pub(super) unsafe extern "C" fn gettimeofday_enosys(tv: *mut Timeval, tz: *mut Timezone) -> i32 {
    let Some(address) = bound(Slot::Gettimeofday) else {
        // SAFETY: forwarded from the caller.
        return unsafe { raw_gettimeofday(tv, tz) };
    };
    // SAFETY: bound only when the symbol was found, with the signature `TodFn`;
    // `address` is that symbol.
    let f = unsafe { core::mem::transmute::<usize, super::TodFn>(address) };
    // SAFETY: forwarded from the caller.
    match unsafe { f(tv, tz) } {
        // SAFETY: forwarded from the caller.
        ret if unserved(ret) => unsafe { raw_gettimeofday(tv, tz) },
        ret => ret,
    }
}

/// Calls a time32 `(clock, struct timespec32 *)` symbol and widens its result into
/// `ts` unless it is null (`clock_getres` allows that).
///
/// # Safety
/// `ts` must be null or valid for writes.
unsafe fn clock_time32(slot: Slot, clock: i32, ts: *mut Timespec, fallback: super::ClockFn) -> i32 {
    let Some(addr) = bound(slot) else {
        // SAFETY: forwarded from the caller.
        return unsafe { fallback(clock, ts) };
    };
    // SAFETY: the table bound `addr` to this slot's time32 symbol, whose C signature
    // is `int (clockid_t, struct old_timespec32 *)`.
    let f = unsafe {
        core::mem::transmute::<usize, unsafe extern "C" fn(i32, *mut [i32; 2]) -> i32>(addr)
    };
    let mut pair = [0i32; 2];
    // SAFETY: `pair` is a writable time32 timespec.
    let ret = unsafe { f(clock, &mut pair) };
    match (ret, widen(pair)) {
        (0, Ok((tv_sec, tv_nsec))) => {
            if !ts.is_null() {
                // SAFETY: not null, so writable (caller).
                unsafe { ts.write(Timespec { tv_sec, tv_nsec }) };
            }
            0
        }
        // An overflowed value is asked of the syscall, which has 64-bit time.
        // SAFETY: forwarded from the caller.
        (0, Err(_)) => unsafe { fallback(clock, ts) },
        // SAFETY: forwarded from the caller.
        (ret, _) if unserved(ret) => unsafe { fallback(clock, ts) },
        (ret, _) => ret,
    }
}

/// # Safety
/// `ts` must be valid for writes.
pub(super) unsafe extern "C" fn clock_gettime_time32(clock: i32, ts: *mut Timespec) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { clock_time32(Slot::ClockGettime, clock, ts, raw_clock_gettime) }
}

/// # Safety
/// `ts` must be null or valid for writes.
pub(super) unsafe extern "C" fn clock_getres_time32(clock: i32, ts: *mut Timespec) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { clock_time32(Slot::ClockGetres, clock, ts, raw_clock_getres) }
}

/// # Safety
/// `tv` must be valid for writes; `tz` null or valid for writes.
pub(super) unsafe extern "C" fn gettimeofday_time32(tv: *mut Timeval, tz: *mut Timezone) -> i32 {
    let Some(addr) = bound(Slot::Gettimeofday) else {
        // SAFETY: forwarded from the caller.
        return unsafe { raw_gettimeofday(tv, tz) };
    };
    // SAFETY: the table bound `addr` to the time32 `gettimeofday` symbol, whose C
    // signature is `int (struct old_timeval32 *, struct timezone *)`.
    let f = unsafe {
        core::mem::transmute::<usize, unsafe extern "C" fn(*mut [i32; 2], *mut Timezone) -> i32>(
            addr,
        )
    };
    let mut pair = [0i32; 2];
    // SAFETY: `pair` is a writable time32 timeval; `tz` is null or writable (caller).
    let ret = unsafe { f(&mut pair, tz) };
    match (ret, widen(pair)) {
        (0, Ok((tv_sec, tv_usec))) => {
            // SAFETY: `tv` is writable (caller).
            unsafe { tv.write(Timeval { tv_sec, tv_usec }) };
            0
        }
        // An overflowed value is asked of the syscall, which has 64-bit time.
        // SAFETY: forwarded from the caller.
        (0, Err(_)) => unsafe { raw_gettimeofday(tv, tz) },
        // SAFETY: forwarded from the caller.
        (ret, _) if unserved(ret) => unsafe { raw_gettimeofday(tv, tz) },
        (ret, _) => ret,
    }
}

/// powerpc: the vDSO's functions need `sys::vdso_call`, so each entry gets a shim.
#[cfg(target_arch = "powerpc64")]
mod powerpc {
    use super::*;
    use crate::sys::vdso_call;
    use crate::syscall::{raw_getcpu, raw_time};
    use core::ffi::c_void;

    /// Calls `slot`'s symbol with up to three arguments, or `fallback` if unbound.
    ///
    /// # Safety
    /// The arguments must be valid for the slot's function.
    unsafe fn call(slot: Slot, a: [usize; 3], fallback: impl FnOnce() -> isize) -> isize {
        match bound(slot) {
            None => fallback(),
            // SAFETY: `addr` is the slot's vDSO symbol; the caller vouches for `a`.
            Some(addr) => unsafe { vdso_call(addr, a[0], a[1], a[2]) },
        }
    }

    /// # Safety
    /// `ts` must be valid for writes.
    pub(in crate::table) unsafe extern "C" fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32 {
        // SAFETY: `ts` is writable (caller); the clock id is sign-extended as the ABI wants.
        unsafe {
            call(
                Slot::ClockGettime,
                [clock as isize as usize, ts as usize, 0],
                || raw_clock_gettime(clock, ts) as isize,
            ) as i32
        }
    }

    /// # Safety
    /// `ts` must be null or valid for writes.
    pub(in crate::table) unsafe extern "C" fn clock_getres(clock: i32, ts: *mut Timespec) -> i32 {
        // SAFETY: as for `clock_gettime`.
        unsafe {
            call(
                Slot::ClockGetres,
                [clock as isize as usize, ts as usize, 0],
                || raw_clock_getres(clock, ts) as isize,
            ) as i32
        }
    }

    /// # Safety
    /// `tv` must be valid for writes; `tz` null or valid for writes.
    pub(in crate::table) unsafe extern "C" fn gettimeofday(
        tv: *mut Timeval,
        tz: *mut Timezone,
    ) -> i32 {
        // SAFETY: both outputs are as the caller vouches; `Timeval` is the kernel's on ppc64.
        unsafe {
            call(Slot::Gettimeofday, [tv as usize, tz as usize, 0], || {
                raw_gettimeofday(tv, tz) as isize
            }) as i32
        }
    }

    /// # Safety
    /// `t` must be null or valid for writes.
    pub(in crate::table) unsafe extern "C" fn time(t: *mut i64) -> i64 {
        // SAFETY: `t` is null or writable (caller); the result is `time_t`, never an error.
        unsafe { call(Slot::Time, [t as usize, 0, 0], || raw_time(t) as isize) as i64 }
    }

    /// # Safety
    /// `cpu` and `node` must each be null or valid for writes.
    pub(in crate::table) unsafe extern "C" fn getcpu(
        cpu: *mut u32,
        node: *mut u32,
        cache: *mut c_void,
    ) -> i32 {
        // SAFETY: the outputs are null or writable (caller).
        unsafe {
            call(
                Slot::Getcpu,
                [cpu as usize, node as usize, cache as usize],
                || raw_getcpu(cpu, node, cache) as isize,
            ) as i32
        }
    }
}

#[cfg(target_arch = "powerpc64")]
pub(super) use powerpc::*;

#[cfg(all(test, target_pointer_width = "64", not(target_arch = "powerpc64")))]
mod tests {
    use super::*;

    /// Natively the x86-64 vDSO's symbols are bound and called; under valgrind
    /// (scripts/reliability/valgrind.sh, no vDSO) none is, and each shim must make the
    /// system call instead of calling address 0. On mips these shims are the entries.
    /// Only where a slot's symbol has the 64-bit C signature the shims call: not on 32-bit
    /// targets (time32 symbols) nor on powerpc64 (its asm call sequence).
    #[test]
    fn the_enosys_shims_answer_with_or_without_a_symbol() {
        let mut ts = Timespec::default();
        let monotonic = ClockId::MONOTONIC.as_raw();
        // SAFETY: `ts` is writable.
        assert_eq!(unsafe { clock_gettime_enosys(monotonic, &mut ts) }, 0);
        assert!(ts.tv_sec > 0 || ts.tv_nsec > 0);
        // SAFETY: `ts` is writable.
        assert_eq!(unsafe { clock_getres_enosys(monotonic, &mut ts) }, 0);
        assert!(ts.tv_sec == 0 && ts.tv_nsec > 0);
        let einval = -(linux_raw_sys::errno::EINVAL as i32);
        // SAFETY: `ts` is writable; an unknown clock: the kernel (or the vDSO's
        // fallback) says EINVAL.
        assert_eq!(unsafe { clock_gettime_enosys(-1, &mut ts) }, einval);
        let mut tv = Timeval::default();
        // SAFETY: `tv` is writable; a NULL timezone is allowed.
        let ret = unsafe { gettimeofday_enosys(&mut tv, core::ptr::null_mut()) };
        assert_eq!(ret, 0);
        assert!(tv.tv_sec > 0);
        assert_eq!(bound(Slot::ClockGettime).is_some(), crate::vdso().is_some());
    }
}
