//! The calls that return their result: each writes into a local through its
//! [`super::through_pointer`] twin and reads the fields back.

use super::failed;
use super::through_pointer::{clock_getres_to, clock_gettime_to, gettimeofday_to};
use crate::table;
use crate::{ClockId, Errno, Timespec, Timeval, Timezone};
use core::mem::MaybeUninit;
use core::ptr::null_mut;

/// Reads `clock`: its time now, as the kernel's `clock_gettime(2)` gives it.
///
/// # Fallback
///
/// Through the vDSO's `clock_gettime` where the process has a vDSO that exports it: the
/// vDSO answers in user space the clocks it can serve and makes the system call itself
/// for the others (CPU-time clocks, alarm clocks, invalid ids, and every clock while the
/// clocksource cannot be read from user space). Without a vDSO, or without that symbol,
/// the `clock_gettime` system call. Either way one call makes at most one system call;
/// [`path`](crate::path) says which way this process goes, and `vdsotime doctor` whether the vDSO
/// really answers.
///
/// # Errors
///
/// The kernel's answer, errno for errno: `EINVAL` for an id the kernel does not know
/// (such as 12, or an auxiliary clock on a kernel built without them), `ENODEV` for an
/// auxiliary clock that is disabled, and where the call ends in the system call,
/// whatever a seccomp filter makes it return (`EPERM`, say).
///
/// # Example
///
/// ```
/// use vdsotime::{clock_gettime, ClockId, Errno};
/// let a = clock_gettime(ClockId::MONOTONIC).unwrap();
/// let b = clock_gettime(ClockId::MONOTONIC).unwrap();
/// assert!(a <= b && a.is_normalized());
/// assert_eq!(clock_gettime(ClockId::from_raw(12)), Err(Errno::EINVAL));
/// ```
#[inline]
pub fn clock_gettime(clock: ClockId) -> Result<Timespec, Errno> {
    let mut ts = MaybeUninit::<Timespec>::uninit();
    // SAFETY: `ts` is writable.
    unsafe { clock_gettime_to(clock, ts.as_mut_ptr()) }?;
    // SAFETY: success means `ts` was written.
    Ok(unsafe { read_timespec(ts.as_ptr()) })
}

/// The resolution of `clock`, as the kernel's `clock_getres(2)` gives it.
///
/// # Fallback
///
/// As [`clock_gettime`], through the vDSO's `clock_getres`, except for an auxiliary
/// clock, which always goes to the system call: the vDSO answers 1 ns for every auxiliary
/// id, where the kernel answers `EINVAL` for one it does not have. Without a vDSO, or
/// without that symbol, the `clock_getres` system call.
///
/// # Errors
///
/// The kernel's answer: `EINVAL` for an id it does not know, and where the call ends in
/// the system call, whatever a seccomp filter makes it return.
///
/// # Example
///
/// ```
/// use vdsotime::{clock_getres, ClockId, Errno};
/// let res = clock_getres(ClockId::MONOTONIC).unwrap();
/// assert_eq!(res, vdsotime::syscall::clock_getres(ClockId::MONOTONIC).unwrap());
/// assert_eq!(clock_getres(ClockId::from_raw(12)), Err(Errno::EINVAL));
/// ```
#[inline]
pub fn clock_getres(clock: ClockId) -> Result<Timespec, Errno> {
    let mut ts = MaybeUninit::<Timespec>::uninit();
    // SAFETY: `ts` is writable.
    unsafe { clock_getres_to(clock, ts.as_mut_ptr()) }?;
    // SAFETY: success means `ts` was written.
    Ok(unsafe { read_timespec(ts.as_ptr()) })
}

/// The wall-clock time at microsecond resolution, as the kernel's `gettimeofday(2)`.
///
/// # Fallback
///
/// Through the vDSO's `gettimeofday` where the process has one (it makes the system call
/// itself while the clocksource cannot be read from user space); otherwise the
/// `gettimeofday` system call.
///
/// # Errors
///
/// None from the kernel for a valid buffer, which this function always passes; where
/// the call ends in the system call, whatever a seccomp filter makes it return.
///
/// # Example
///
/// ```
/// let tv = vdsotime::gettimeofday().unwrap();
/// assert!(tv.tv_sec > 1_600_000_000 && tv.is_normalized());
/// ```
#[inline]
pub fn gettimeofday() -> Result<Timeval, Errno> {
    let mut tv = MaybeUninit::<Timeval>::uninit();
    // SAFETY: `tv` is writable and a null timezone is allowed.
    unsafe { gettimeofday_to(tv.as_mut_ptr(), null_mut()) }?;
    // SAFETY: success means `tv` was written.
    Ok(unsafe { read_timeval(tv.as_ptr()) })
}

/// `gettimeofday` together with the kernel's `struct timezone` (set by `settimeofday`).
///
/// # Fallback
///
/// As [`gettimeofday`]: the vDSO's `gettimeofday` fills both where there is one,
/// otherwise the system call.
///
/// # Errors
///
/// As [`gettimeofday`].
///
/// # Example
///
/// ```
/// let (tv, tz) = vdsotime::gettimeofday_tz().unwrap();
/// assert!(tv.is_normalized());
/// assert!(tz.tz_minuteswest.abs() <= 24 * 60, "{tz:?}");
/// ```
pub fn gettimeofday_tz() -> Result<(Timeval, Timezone), Errno> {
    let (mut tv, mut tz) = (Timeval::default(), Timezone::default());
    // SAFETY: both outputs are valid and writable.
    unsafe { gettimeofday_to(&mut tv, &mut tz) }?;
    Ok((tv, tz))
}

/// Seconds since the epoch, as the kernel's `time(2)` (the coarse wall clock's seconds).
///
/// # Fallback
///
/// Through the vDSO's `time` where it has one; on a 64-bit target whose vDSO has none
/// (and on 32-bit targets, whose `time` is 32 bits), the seconds of the vDSO's
/// `CLOCK_REALTIME_COARSE`; without a vDSO, the `time` system call.
///
/// # Errors
///
/// None is returned as such: `-1` only if even the system call fails (a seccomp filter,
/// say), as libc's `time`.
///
/// # Example
///
/// ```
/// let t = vdsotime::time();
/// let now = vdsotime::clock_gettime(vdsotime::ClockId::REALTIME).unwrap();
/// assert!(t <= now.tv_sec && t + 1 >= now.tv_sec);
/// ```
#[inline]
pub fn time() -> i64 {
    // SAFETY: a null pointer asks for the return value only.
    unsafe { table::time()(null_mut()) }
}

/// The CPU and NUMA node the caller was running on when asked.
///
/// # Fallback
///
/// From the thread's registered rseq area where glibc registered one and the kernel keeps
/// the node there (Linux 6.3+), with no call at all; else through the vDSO's `getcpu`;
/// else the `getcpu` system call.
///
/// # Errors
///
/// Only where the call ends in the system call: whatever a seccomp filter makes it return.
///
/// # Example
///
/// ```
/// let (cpu, _node) = vdsotime::getcpu().unwrap();
/// assert!(cpu < 65536);
/// ```
#[inline]
pub fn getcpu() -> Result<(u32, u32), Errno> {
    if let Some(pair) = crate::rseq::cpu_and_node() {
        return Ok(pair);
    }
    // Once more: the area was looked for only now, or a migration raced the read (the
    // next read sees the new CPU), which would otherwise cost a system call where the
    // vDSO has no getcpu.
    crate::rseq::looked_up_now();
    if let Some(pair) = crate::rseq::cpu_and_node() {
        return Ok(pair);
    }
    let (mut cpu, mut node) = (0u32, 0u32);
    // SAFETY: both outputs are writable; the cache argument is unused by every kernel.
    let ret = unsafe { table::getcpu()(&mut cpu, &mut node, null_mut()) };
    if ret != 0 {
        return Err(failed(ret));
    }
    Ok((cpu, node))
}

/// The CPU the caller was running on when asked, as glibc's `sched_getcpu`.
///
/// # Fallback
///
/// From the thread's rseq area where glibc registered one (any kernel with rseq), else
/// as [`getcpu`].
///
/// # Errors
///
/// As [`getcpu`].
///
/// # Example
///
/// ```
/// let cpu = vdsotime::current_cpu().unwrap();
/// assert!(cpu < 65536);
/// ```
#[inline]
pub fn current_cpu() -> Result<u32, Errno> {
    match crate::rseq::cpu() {
        Some(cpu) => Ok(cpu),
        None => current_cpu_otherwise(),
    }
}

/// [`current_cpu`] without an rseq area: out of line, so the rseq read inlines alone.
#[inline(never)]
fn current_cpu_otherwise() -> Result<u32, Errno> {
    if crate::rseq::looked_up_now() {
        if let Some(cpu) = crate::rseq::cpu() {
            return Ok(cpu);
        }
    }
    getcpu().map(|(cpu, _)| cpu)
}

/// Reads a `Timespec` the vDSO has just written, one field at a time: on x86 a 16-byte
/// load over its two 8-byte stores cannot be store-forwarded, a stall that costs more
/// than the read. The volatile reads keep the compiler from merging the two loads.
///
/// # Safety
/// `p` must point to a `Timespec` written by a call that returned 0.
#[inline(always)]
unsafe fn read_timespec(p: *const Timespec) -> Timespec {
    // SAFETY: the caller guarantees `p` is valid and initialized.
    unsafe {
        Timespec {
            tv_sec: core::ptr::addr_of!((*p).tv_sec).read_volatile(),
            tv_nsec: core::ptr::addr_of!((*p).tv_nsec).read_volatile(),
        }
    }
}

/// [`read_timespec`] for a `Timeval`.
///
/// # Safety
/// `p` must point to a `Timeval` written by a call that returned 0.
#[inline(always)]
unsafe fn read_timeval(p: *const Timeval) -> Timeval {
    // SAFETY: the caller guarantees `p` is valid and initialized.
    unsafe {
        Timeval {
            tv_sec: core::ptr::addr_of!((*p).tv_sec).read_volatile(),
            tv_usec: core::ptr::addr_of!((*p).tv_usec).read_volatile(),
        }
    }
}
