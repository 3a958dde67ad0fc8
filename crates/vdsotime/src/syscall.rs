//! The syscall path: every function with the kernel's exact results and errors, never
//! touching the vDSO. It is the fallback the fast path uses, and a public handle for
//! benchmarks and tests that want the syscall on purpose (like Go's
//! `BenchmarkClockVDSOAndFallbackPaths`).
//!
//! On 32-bit targets the `*_time64` syscalls are used (Linux 5.1+), with the time32
//! ones as a fallback on older kernels; a time32 value whose seconds overflowed into the
//! sign bit (2038 to 2106) is never returned (`EOVERFLOW`, or recomputed from a 64-bit
//! clock for `gettimeofday`); past 2106 a time32 value cannot be told from an earlier
//! one (see `time32.rs`).
//!
//! ```
//! use vdsotime::{syscall, ClockId, Errno};
//! let t = syscall::clock_gettime(ClockId::MONOTONIC).unwrap();
//! assert!(t.is_normalized());
//! assert_eq!(syscall::clock_gettime(ClockId::from_raw(-1)), Err(Errno::EINVAL));
//! ```

use crate::sys::{nr, syscall};
use crate::{ClockId, Errno, Timespec, Timeval, Timezone};
use core::ffi::c_void;
use core::ptr::null_mut;

/// Reads `clock` with the `clock_gettime` syscall.
///
/// # Fallback
///
/// None: always the system call, never the vDSO.
///
/// # Errors
///
/// The kernel's: `EINVAL` for an id it does not know, `ENODEV` for a disabled auxiliary
/// clock, whatever a seccomp filter returns.
///
/// # Example
///
/// ```
/// use vdsotime::{syscall, ClockId, Errno};
/// assert!(syscall::clock_gettime(ClockId::MONOTONIC).unwrap().is_normalized());
/// assert_eq!(syscall::clock_gettime(ClockId::from_raw(12)), Err(Errno::EINVAL));
/// ```
pub fn clock_gettime(clock: ClockId) -> Result<Timespec, Errno> {
    let mut ts = Timespec::default();
    // SAFETY: `ts` is a valid, writable `Timespec`.
    check(unsafe { raw_clock_gettime(clock.as_raw(), &mut ts) }).map(|()| ts)
}

/// The resolution of `clock`, by the `clock_getres` syscall.
///
/// # Fallback
///
/// None: always the system call, never the vDSO.
///
/// # Errors
///
/// The kernel's: `EINVAL` for an id it does not know, whatever a seccomp filter returns.
///
/// # Example
///
/// ```
/// use vdsotime::{syscall, ClockId, Errno};
/// assert!(syscall::clock_getres(ClockId::MONOTONIC).is_ok());
/// assert_eq!(syscall::clock_getres(ClockId::from_raw(12)), Err(Errno::EINVAL));
/// ```
pub fn clock_getres(clock: ClockId) -> Result<Timespec, Errno> {
    let mut ts = Timespec::default();
    // SAFETY: `ts` is a valid, writable `Timespec`.
    check(unsafe { raw_clock_getres(clock.as_raw(), &mut ts) }).map(|()| ts)
}

/// The wall-clock time by the `gettimeofday` syscall.
///
/// # Fallback
///
/// None: always the system call, never the vDSO.
///
/// # Errors
///
/// None from the kernel for the valid buffer this passes; whatever a seccomp filter
/// returns.
///
/// # Example
///
/// ```
/// let tv = vdsotime::syscall::gettimeofday().unwrap();
/// assert!(tv.tv_sec > 1_600_000_000 && tv.is_normalized());
/// ```
pub fn gettimeofday() -> Result<Timeval, Errno> {
    let mut tv = Timeval::default();
    // SAFETY: `tv` is writable; a null timezone is allowed.
    check(unsafe { raw_gettimeofday(&mut tv, null_mut()) }).map(|()| tv)
}

/// `gettimeofday` with the kernel's `struct timezone`.
///
/// # Fallback
///
/// None: always the system call, never the vDSO.
///
/// # Errors
///
/// As [`gettimeofday`].
///
/// # Example
///
/// ```
/// let (tv, tz) = vdsotime::syscall::gettimeofday_tz().unwrap();
/// assert_eq!((tv.tv_sec > 0, tz), (true, vdsotime::gettimeofday_tz().unwrap().1));
/// ```
pub fn gettimeofday_tz() -> Result<(Timeval, Timezone), Errno> {
    let (mut tv, mut tz) = (Timeval::default(), Timezone::default());
    // SAFETY: both outputs are valid and writable.
    check(unsafe { raw_gettimeofday(&mut tv, &mut tz) }).map(|()| (tv, tz))
}

/// Seconds since the epoch by the `time` syscall.
///
/// # Fallback
///
/// Where an architecture has no `time` syscall, the seconds of `CLOCK_REALTIME_COARSE`
/// by the `clock_gettime` syscall (the same kernel value); never the vDSO.
///
/// # Errors
///
/// None is returned as such: `-1` if the syscall fails (a seccomp filter, say), as
/// libc's `time` reports it.
///
/// # Example
///
/// ```
/// let t = vdsotime::syscall::time();
/// assert!((t - vdsotime::time()).abs() <= 1);
/// ```
pub fn time() -> i64 {
    // SAFETY: a null pointer asks for the return value only.
    unsafe { raw_time(null_mut()) }
}

/// The CPU and NUMA node the caller is running on, by the `getcpu` syscall.
///
/// # Fallback
///
/// None: always the system call, never the vDSO.
///
/// # Errors
///
/// Whatever a seccomp filter returns.
///
/// # Example
///
/// ```
/// let (cpu, _node) = vdsotime::syscall::getcpu().unwrap();
/// assert!(cpu < 65536);
/// ```
pub fn getcpu() -> Result<(u32, u32), Errno> {
    let (mut cpu, mut node) = (0u32, 0u32);
    // SAFETY: both outputs are valid and writable; the cache argument is unused.
    check(unsafe { raw_getcpu(&mut cpu, &mut node, null_mut()) }).map(|()| (cpu, node))
}

fn check(ret: i32) -> Result<(), Errno> {
    match Errno::from_ret(ret as isize) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn ret_i32(ret: isize) -> i32 {
    ret as i32 // every result here is 0 or -errno
}

#[cfg(target_pointer_width = "32")]
use crate::time32::widen;

/// A clock syscall writing a `Timespec`: the time64 one on 32-bit targets, falling back
/// to the time32 one where the kernel predates it.
///
/// # Safety
/// `ts` must be valid for writes, or null where the syscall allows it (`clock_getres`).
unsafe fn clock_syscall(nr64: u32, _nr32: u32, clock: i32, ts: *mut Timespec) -> i32 {
    // SAFETY: `ts` is writable (caller); the kernel writes a `__kernel_timespec`.
    let ret = unsafe { syscall(nr64, clock as isize as usize, ts as usize, 0, 0, 0) };
    #[cfg(target_pointer_width = "32")]
    if ret == -(linux_raw_sys::errno::ENOSYS as isize) {
        let mut pair = [0i32; 2];
        // SAFETY: the kernel writes a time32 `struct timespec` into `pair`.
        let ret = unsafe {
            syscall(
                _nr32,
                clock as isize as usize,
                pair.as_mut_ptr() as usize,
                0,
                0,
                0,
            )
        };
        if ret != 0 {
            return ret_i32(ret);
        }
        return match widen(pair) {
            Ok((sec, nsec)) => {
                if !ts.is_null() {
                    // SAFETY: not null, so writable (caller).
                    unsafe {
                        ts.write(Timespec {
                            tv_sec: sec,
                            tv_nsec: nsec,
                        })
                    };
                }
                0
            }
            Err(e) => e,
        };
    }
    ret_i32(ret)
}

#[cfg(target_pointer_width = "64")]
use nr::{__NR_clock_getres as NR_GETRES64, __NR_clock_gettime as NR_GETTIME64};
#[cfg(target_pointer_width = "32")]
use nr::{__NR_clock_getres_time64 as NR_GETRES64, __NR_clock_gettime64 as NR_GETTIME64};

/// `clock_gettime` with a C signature, so it can stand in a vDSO slot.
///
/// # Safety
/// `ts` must be valid for writes.
pub(crate) unsafe extern "C" fn raw_clock_gettime(clock: i32, ts: *mut Timespec) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { clock_syscall(NR_GETTIME64, nr::__NR_clock_gettime, clock, ts) }
}

/// `clock_getres` with a C signature. A null `ts` is allowed, as by the kernel.
///
/// # Safety
/// `ts` must be null or valid for writes.
pub(crate) unsafe extern "C" fn raw_clock_getres(clock: i32, ts: *mut Timespec) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { clock_syscall(NR_GETRES64, nr::__NR_clock_getres, clock, ts) }
}

/// `gettimeofday` with a C signature and a widened `Timeval`.
///
/// # Safety
/// `tv` must be valid for writes; `tz` null or valid for writes.
pub(crate) unsafe extern "C" fn raw_gettimeofday(tv: *mut Timeval, tz: *mut Timezone) -> i32 {
    #[cfg(target_pointer_width = "64")]
    {
        // SAFETY: on 64-bit targets `Timeval` is the kernel's `struct timeval`.
        ret_i32(unsafe { syscall(nr::__NR_gettimeofday, tv as usize, tz as usize, 0, 0, 0) })
    }
    #[cfg(target_pointer_width = "32")]
    {
        let mut pair = [0i32; 2];
        // SAFETY: the kernel writes a time32 `struct timeval` into `pair` and the
        // timezone into `tz` if not null.
        let ret = unsafe {
            syscall(
                nr::__NR_gettimeofday,
                pair.as_mut_ptr() as usize,
                tz as usize,
                0,
                0,
                0,
            )
        };
        if ret != 0 {
            return ret_i32(ret);
        }
        let value = match widen(pair) {
            Ok((sec, usec)) => Timeval {
                tv_sec: sec,
                tv_usec: usec,
            },
            // Past 2038 the time32 call overflows; the 64-bit clock still knows the time.
            Err(_) => match clock_gettime(ClockId::REALTIME) {
                Ok(ts) => ts.to_timeval(),
                Err(e) => return -e.raw(),
            },
        };
        // SAFETY: `tv` is writable (caller).
        unsafe { tv.write(value) };
        0
    }
}

/// `time` with a C signature: also stores the result through `t` if not null.
///
/// # Safety
/// `t` must be null or valid for writes.
pub(crate) unsafe extern "C" fn raw_time(t: *mut i64) -> i64 {
    #[cfg(any(target_arch = "x86_64", target_arch = "powerpc64"))]
    // SAFETY: a null pointer asks the kernel for the return value only.
    let secs = match unsafe { syscall(nr::__NR_time, 0, 0, 0, 0, 0) } {
        ret if Errno::from_ret(ret).is_some() => -1,
        ret => ret as i64,
    };
    // Elsewhere there is no `time` syscall (or only a time32 one): the kernel's `time`
    // is the coarse wall clock's seconds.
    #[cfg(not(any(target_arch = "x86_64", target_arch = "powerpc64")))]
    let secs = clock_gettime(ClockId::REALTIME_COARSE).map_or(-1, |ts| ts.tv_sec);
    if !t.is_null() {
        // SAFETY: `t` is not null, so writable (caller).
        unsafe { t.write(secs) };
    }
    secs
}

/// `getcpu` with a C signature.
///
/// # Safety
/// `cpu` and `node` must each be null or valid for writes.
pub(crate) unsafe extern "C" fn raw_getcpu(
    cpu: *mut u32,
    node: *mut u32,
    _cache: *mut c_void,
) -> i32 {
    // SAFETY: the kernel writes each non-null output; the cache argument is ignored.
    ret_i32(unsafe { syscall(nr::__NR_getcpu, cpu as usize, node as usize, 0, 0, 0) })
}

/// `getrandom(2)` by the system call: the kernel's exact results and errors (see
/// [`crate::getrandom`]), never the vDSO.
///
/// ```
/// use vdsotime::{syscall, Errno, GrndFlags};
/// let mut buf = [0u8; 8];
/// assert_eq!(syscall::getrandom(&mut buf, GrndFlags::INSECURE), Ok(8));
/// assert_eq!(
///     syscall::getrandom(&mut buf, GrndFlags::INSECURE | GrndFlags::RANDOM),
///     Err(Errno::EINVAL)
/// );
/// ```
pub fn getrandom(buf: &mut [u8], flags: crate::GrndFlags) -> Result<usize, Errno> {
    // SAFETY: `buf` is writable for its length.
    unsafe { getrandom_to(buf.as_mut_ptr(), buf.len(), flags) }
}

/// [`getrandom`] into raw memory: the kernel checks the range itself, so a pointer it
/// cannot write (NULL, say) gives `EFAULT` rather than a crash. For C shims.
///
/// # Safety
/// `buf` must be writable for `len` bytes, or memory the kernel refuses to write.
///
/// # Errors
///
/// As [`getrandom`]; `EFAULT` for memory the kernel cannot write.
///
/// # Example
///
/// ```
/// use vdsotime::{syscall, Errno, GrndFlags};
/// let mut buf = [0u8; 16];
/// // SAFETY: `buf` is writable for 16 bytes.
/// assert_eq!(unsafe { syscall::getrandom_to(buf.as_mut_ptr(), 16, GrndFlags::NONE) }, Ok(16));
/// // SAFETY: the kernel checks a null pointer and refuses it.
/// let null = unsafe { syscall::getrandom_to(core::ptr::null_mut(), 16, GrndFlags::NONE) };
/// assert_eq!(null, Err(Errno::EFAULT));
/// ```
pub unsafe fn getrandom_to(
    buf: *mut u8,
    len: usize,
    flags: crate::GrndFlags,
) -> Result<usize, Errno> {
    // SAFETY: forwarded from the caller.
    let ret = unsafe { raw_getrandom(buf, len, flags.raw()) };
    match Errno::from_ret(ret) {
        Some(e) => Err(e),
        None => Ok(ret as usize),
    }
}

/// The `getrandom` system call: a byte count or `-errno`.
///
/// # Safety
/// `buf` must be writable for `len` bytes; the kernel checks the range itself and
/// fails with `EFAULT` for memory it cannot write.
#[inline]
pub(crate) unsafe fn raw_getrandom(buf: *mut u8, len: usize, flags: u32) -> isize {
    // SAFETY: forwarded from the caller.
    unsafe { syscall(nr::__NR_getrandom, buf as usize, len, flags as usize, 0, 0) }
}
