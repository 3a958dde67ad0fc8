//! The calls with the C signature: they write through the caller's pointers, for the
//! C shims (`libvdsotime`, the preload), where each compiles to one call of its entry.

use super::failed;
use crate::table;
use crate::{ClockId, Errno, Timespec, Timeval, Timezone};

/// `time` with the C signature: also stores the result through `t` unless it is null.
/// For C shims (`libvdsotime`, the preload), where it compiles to a tail jump.
///
/// # Fallback
///
/// As [`time`](crate::time).
///
/// # Errors
///
/// As [`time`](crate::time): `-1` only if even the system call fails.
///
/// # Safety
/// `t` must be null or valid for writes.
///
/// # Example
///
/// ```
/// let mut stored = 0i64;
/// // SAFETY: `stored` is writable.
/// let t = unsafe { vdsotime::time_to(&mut stored) };
/// assert_eq!(t, stored);
/// assert!(t > 1_600_000_000);
/// ```
#[inline]
pub unsafe fn time_to(t: *mut i64) -> i64 {
    // SAFETY: forwarded from the caller.
    unsafe { table::time()(t) }
}

/// `clock_gettime` writing straight into `*ts`, as the C function does: for C shims
/// (`libvdsotime`, the preload), where the result then needs no copy. On error `*ts`
/// is left as it was.
///
/// # Fallback
///
/// As [`clock_gettime`](crate::clock_gettime).
///
/// # Errors
///
/// As [`clock_gettime`](crate::clock_gettime).
///
/// # Safety
/// `ts` must be valid for writes of a `Timespec`.
///
/// # Example
///
/// ```
/// use vdsotime::{clock_gettime_to, ClockId, Errno, Timespec};
/// let mut ts = Timespec::default();
/// // SAFETY: `ts` is writable.
/// unsafe { clock_gettime_to(ClockId::REALTIME, &mut ts) }.unwrap();
/// assert!(ts.tv_sec > 1_600_000_000);
/// let before = ts;
/// // SAFETY: as above.
/// let e = unsafe { clock_gettime_to(ClockId::from_raw(12), &mut ts) };
/// assert_eq!((e, ts), (Err(Errno::EINVAL), before));
/// ```
#[inline]
pub unsafe fn clock_gettime_to(clock: ClockId, ts: *mut Timespec) -> Result<(), Errno> {
    // SAFETY: forwarded from the caller.
    unsafe { clock_to(clock, ts, table::clock_gettime()) }
}

/// `clock_getres` writing straight into `*res`, which may be null (then only the
/// clock is checked, as by the kernel). For C shims, like [`clock_gettime_to`].
///
/// # Fallback
///
/// As [`clock_getres`](crate::clock_getres).
///
/// # Errors
///
/// As [`clock_getres`](crate::clock_getres).
///
/// # Safety
/// `res` must be null or valid for writes of a `Timespec`.
///
/// # Example
///
/// ```
/// use vdsotime::{clock_getres_to, ClockId, Errno};
/// // SAFETY: a null `res` only checks the clock.
/// assert_eq!(unsafe { clock_getres_to(ClockId::MONOTONIC, core::ptr::null_mut()) }, Ok(()));
/// // SAFETY: as above.
/// let e = unsafe { clock_getres_to(ClockId::from_raw(12), core::ptr::null_mut()) };
/// assert_eq!(e, Err(Errno::EINVAL));
/// ```
#[inline]
pub unsafe fn clock_getres_to(clock: ClockId, res: *mut Timespec) -> Result<(), Errno> {
    // An auxiliary clock's resolution is asked of the syscall: the vDSO answers 1 ns for
    // every auxiliary id, where the syscall says `EINVAL` for a clock that is not enabled
    // or a kernel built without them (seen on Linux 6.18). A choice of function, not a
    // branch around the call, which `vdsotime bench` measured dearer (docs/performance.md,
    // "What ±1 cycle means").
    let entry = if clock.is_aux() {
        crate::syscall::raw_clock_getres as table::ClockFn
    } else {
        table::clock_getres()
    };
    // SAFETY: forwarded from the caller.
    unsafe { clock_to(clock, res, entry) }
}

/// `gettimeofday` writing straight into `*tv` and, unless it is null, `*tz`. For C
/// shims, like [`clock_gettime_to`]. On 64-bit targets `tv` may be null too, as for the
/// kernel (then only `*tz` is written).
///
/// # Fallback
///
/// As [`gettimeofday`](crate::gettimeofday).
///
/// # Errors
///
/// As [`gettimeofday`](crate::gettimeofday).
///
/// # Safety
/// `tv` must be valid for writes of a `Timeval` (or null, on 64-bit targets); `tz` null
/// or valid for writes.
///
/// # Example
///
/// ```
/// use vdsotime::{gettimeofday_to, Timeval};
/// let mut tv = Timeval::default();
/// // SAFETY: `tv` is writable; a null timezone is allowed.
/// unsafe { gettimeofday_to(&mut tv, core::ptr::null_mut()) }.unwrap();
/// assert!(tv.tv_sec > 1_600_000_000 && tv.is_normalized());
/// ```
#[inline]
pub unsafe fn gettimeofday_to(tv: *mut Timeval, tz: *mut Timezone) -> Result<(), Errno> {
    // SAFETY: forwarded from the caller.
    let ret = unsafe { table::gettimeofday()(tv, tz) };
    if ret != 0 {
        return Err(failed(ret));
    }
    Ok(())
}

/// The `*_to` clock calls: one call of the entry, whatever the clock.
///
/// # Safety
/// `out` must be valid for what `entry` writes.
#[inline(always)]
unsafe fn clock_to(clock: ClockId, out: *mut Timespec, entry: table::ClockFn) -> Result<(), Errno> {
    // SAFETY: forwarded from the caller.
    let ret = unsafe { entry(clock.as_raw(), out) };
    if ret != 0 {
        return Err(failed(ret));
    }
    Ok(())
}
