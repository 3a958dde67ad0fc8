//! The C calling convention of the clock functions: results stored through caller pointers,
//! 0 or -1 with `errno`. Shared by the exported `vdsotime_*` functions and the LD_PRELOAD
//! library, which exports the same code under the libc names.
//!
//! Nothing here can panic: conversions are checked (`EOVERFLOW`), NULL is checked, and the
//! stores accept any alignment, so they have no precondition beyond a writable address.

// On musl the `libc` crate deprecates `time_t` for being musl 1.1's 32-bit one: on 32-bit
// musl that is exactly the ABI of the plain names here (ctypes.rs has musl 1.2's).
#![cfg_attr(target_env = "musl", allow(deprecated))]

use core::ffi::{c_int, c_uint, c_void};
use core::ptr;

use vdsotime::{ClockId, Errno, GrndFlags, Timespec, Timeval, Timezone};

/// Sets the calling thread's `errno` and returns -1, as libc functions fail. Out of line,
/// so a successful call keeps no register alive across its own call into the vDSO.
#[cold]
#[inline(never)]
pub extern "C" fn fail(errno: c_int) -> c_int {
    // SAFETY: __errno_location returns the calling thread's errno slot, valid for the thread's
    // lifetime; it takes no lock and is async-signal-safe.
    unsafe { *libc::__errno_location() = errno };
    -1
}

#[inline]
fn fail_with(e: Errno) -> c_int {
    fail(e.raw())
}

/// 0, or -1 with `errno`.
#[inline]
fn status(r: Result<(), Errno>) -> c_int {
    match r {
        Ok(()) => 0,
        Err(e) => fail_with(e),
    }
}

/// An integer field of an output structure, stored with one volatile store of its bytes.
///
/// Why: the vDSO writes a result with one 8-byte store per field. Storing it on as a whole
/// structure lets the compiler read it back as one 16-byte value, a load that spans two
/// stores, which x86 cannot forward: a stall that costs more than a coarse clock read. Volatile
/// stores of `[u8; N]` keep each field a separate load and store; their alignment of 1 means
/// any address is accepted, so nothing here can abort.
trait Field: Copy {
    /// # Safety
    /// `at` is writable for `size_of::<Self>()` bytes.
    unsafe fn put(self, at: *mut Self);
}

macro_rules! field {
    ($($t:ty),*) => {$(
        impl Field for $t {
            #[inline(always)]
            unsafe fn put(self, at: *mut $t) {
                // SAFETY: the caller guarantees `at` is writable for the bytes of a `$t`; a
                // byte array has alignment 1.
                unsafe { at.cast::<[u8; core::mem::size_of::<$t>()]>().write_volatile(self.to_ne_bytes()) }
            }
        }
    )*};
}
field!(i32, i64);

/// A seconds/fraction pair converted into the field types of an output structure.
#[cfg(target_pointer_width = "32")]
#[inline(always)]
fn fit<S: TryFrom<i64>, F: TryFrom<i64>>(sec: i64, frac: i64) -> Option<(S, F)> {
    Some((S::try_from(sec).ok()?, F::try_from(frac).ok()?))
}

/// Stores a seconds/fraction pair into the two fields at `sec_at`/`frac_at`, or fails with
/// EOVERFLOW (a 32-bit `time_t` after 2038) without writing.
///
/// # Safety
/// Both pointers are writable fields of one non-NULL output structure.
#[inline(always)]
unsafe fn store_pair<S: Field, F: Field>(
    pair: Option<(S, F)>,
    sec_at: *mut S,
    frac_at: *mut F,
) -> c_int {
    match pair {
        Some((sec, frac)) => {
            // SAFETY: forwarded caller contract.
            unsafe {
                sec.put(sec_at);
                frac.put(frac_at);
            }
            0
        }
        None => fail(libc::EOVERFLOW),
    }
}

/// # Safety
/// `out` is non-NULL and writable for a `libc::timespec`.
#[cfg(target_pointer_width = "32")]
#[inline(always)]
unsafe fn store_libc_timespec(out: *mut libc::timespec, t: Timespec) -> c_int {
    // SAFETY: forwarded caller contract; addr_of_mut! makes no reference.
    unsafe {
        let (sec, nsec) = (
            ptr::addr_of_mut!((*out).tv_sec),
            ptr::addr_of_mut!((*out).tv_nsec),
        );
        store_pair(fit(t.tv_sec, t.tv_nsec), sec, nsec)
    }
}

/// # Safety
/// `out` is non-NULL and writable for a `libc::timeval`.
#[cfg(target_pointer_width = "32")]
#[inline(always)]
unsafe fn store_libc_timeval(out: *mut libc::timeval, t: Timeval) -> c_int {
    // SAFETY: forwarded caller contract; addr_of_mut! makes no reference.
    unsafe {
        let (sec, usec) = (
            ptr::addr_of_mut!((*out).tv_sec),
            ptr::addr_of_mut!((*out).tv_usec),
        );
        store_pair(fit(t.tv_sec, t.tv_usec), sec, usec)
    }
}

/// # Safety
/// `out` is non-NULL and writable for a `Timeval`.
#[inline(always)]
unsafe fn store_timeval(out: *mut Timeval, t: Timeval) -> c_int {
    // SAFETY: forwarded caller contract; addr_of_mut! makes no reference.
    unsafe {
        let (sec, usec) = (
            ptr::addr_of_mut!((*out).tv_sec),
            ptr::addr_of_mut!((*out).tv_usec),
        );
        store_pair(Some((t.tv_sec, t.tv_usec)), sec, usec)
    }
}

/// `clock_gettime` into the C library's `struct timespec`.
///
/// # Safety
/// `ts` is NULL or writable for a `libc::timespec`.
#[inline]
pub unsafe fn clock_gettime(clock: c_int, ts: *mut libc::timespec) -> c_int {
    if ts.is_null() {
        return clock_gettime_null(clock);
    }
    #[cfg(target_pointer_width = "64")]
    // SAFETY: on 64-bit targets `struct timespec` is the kernel's, which `Timespec`
    // mirrors; the caller guarantees `ts` is writable.
    return status(unsafe { vdsotime::clock_gettime_to(ClockId::from_raw(clock), ts.cast()) });
    #[cfg(target_pointer_width = "32")]
    match vdsotime::clock_gettime(ClockId::from_raw(clock)) {
        // SAFETY: non-NULL, and the caller guarantees it is writable.
        Ok(t) => unsafe { store_libc_timespec(ts, t) },
        Err(e) => fail_with(e),
    }
}

/// `clock_gettime` with a NULL result: the kernel validates the clock, then says EFAULT.
#[cold]
#[inline(never)]
extern "C" fn clock_gettime_null(clock: c_int) -> c_int {
    match vdsotime::clock_gettime(ClockId::from_raw(clock)) {
        Ok(_) => fail(libc::EFAULT),
        Err(e) => fail_with(e),
    }
}

/// `clock_gettime` into the kernel's 64-bit timespec.
///
/// # Safety
/// `ts` is NULL or writable for a `Timespec` (`struct vdsotime_timespec64`).
#[inline]
pub unsafe fn clock_gettime64(clock: c_int, ts: *mut Timespec) -> c_int {
    if ts.is_null() {
        return clock_gettime_null(clock);
    }
    // SAFETY: the caller guarantees `ts` is writable.
    status(unsafe { vdsotime::clock_gettime_to(ClockId::from_raw(clock), ts) })
}

/// `clock_getres` into the C library's `struct timespec`; `res` may be NULL.
///
/// # Safety
/// `res` is NULL or writable for a `libc::timespec`.
#[inline]
pub unsafe fn clock_getres(clock: c_int, res: *mut libc::timespec) -> c_int {
    #[cfg(target_pointer_width = "64")]
    // SAFETY: on 64-bit targets `struct timespec` is the kernel's; `res` is NULL (allowed:
    // only the clock is checked) or writable, as the caller guarantees.
    return status(unsafe { vdsotime::clock_getres_to(ClockId::from_raw(clock), res.cast()) });
    #[cfg(target_pointer_width = "32")]
    match vdsotime::clock_getres(ClockId::from_raw(clock)) {
        Ok(_) if res.is_null() => 0,
        // SAFETY: non-NULL, and the caller guarantees it is writable.
        Ok(t) => unsafe { store_libc_timespec(res, t) },
        Err(e) => fail_with(e),
    }
}

/// `clock_getres` into the kernel's 64-bit timespec; `res` may be NULL.
///
/// # Safety
/// `res` is NULL or writable for a `Timespec`.
#[inline]
pub unsafe fn clock_getres64(clock: c_int, res: *mut Timespec) -> c_int {
    // SAFETY: `res` is NULL (allowed) or writable, as the caller guarantees.
    status(unsafe { vdsotime::clock_getres_to(ClockId::from_raw(clock), res) })
}

/// Reads the time (and the kernel's timezone when `want_tz`), as `gettimeofday` needs.
#[inline]
fn read_timeofday(want_tz: bool) -> Result<(Timeval, Option<Timezone>), Errno> {
    if want_tz {
        vdsotime::gettimeofday_tz().map(|(tv, tz)| (tv, Some(tz)))
    } else {
        vdsotime::gettimeofday().map(|tv| (tv, None))
    }
}

/// Stores the kernel's `struct timezone` through `tz` when it is present.
///
/// # Safety
/// `tz` is NULL or writable for a `struct timezone`.
#[inline]
unsafe fn store_tz(tz: *mut c_void, value: Option<Timezone>) {
    if let Some(v) = value {
        if !tz.is_null() {
            // SAFETY: non-NULL, and the caller guarantees it is writable for a struct timezone,
            // which has Timezone's layout (two ints).
            unsafe { tz.cast::<Timezone>().write_unaligned(v) };
        }
    }
}

/// `gettimeofday` into the C library's `struct timeval`; either pointer may be NULL.
///
/// # Safety
/// `tv` is NULL or writable for a `libc::timeval`; `tz` is NULL or writable for a
/// `struct timezone`.
#[inline]
pub unsafe fn gettimeofday(tv: *mut libc::timeval, tz: *mut c_void) -> c_int {
    // On 64-bit targets `struct timeval` is the kernel's, which `Timeval` mirrors, and
    // the vDSO and the syscall take either pointer NULL, as this function does.
    #[cfg(target_pointer_width = "64")]
    // SAFETY: `struct timezone` is `Timezone`; the caller guarantees each pointer is NULL
    // or writable, which `gettimeofday_to` accepts on 64-bit targets.
    return status(unsafe { vdsotime::gettimeofday_to(tv.cast(), tz.cast()) });
    #[cfg(target_pointer_width = "32")]
    if tv.is_null() && tz.is_null() {
        return 0; // the kernel does nothing either
    }
    #[cfg(target_pointer_width = "32")]
    match read_timeofday(!tz.is_null()) {
        Ok((t, zone)) => {
            if !tv.is_null() {
                // SAFETY: non-NULL, and the caller guarantees it is writable.
                if unsafe { store_libc_timeval(tv, t) } != 0 {
                    return -1;
                }
            }
            // SAFETY: the caller guarantees tz is NULL or writable.
            unsafe { store_tz(tz, zone) };
            0
        }
        Err(e) => fail_with(e),
    }
}

/// `gettimeofday` into a 64-bit timeval; either pointer may be NULL.
///
/// # Safety
/// `tv` is NULL or writable for a `Timeval`; `tz` is NULL or writable for a `struct timezone`.
#[inline]
pub unsafe fn gettimeofday64(tv: *mut Timeval, tz: *mut c_void) -> c_int {
    if tv.is_null() && tz.is_null() {
        return 0;
    }
    match read_timeofday(!tz.is_null()) {
        Ok((t, zone)) => {
            if !tv.is_null() {
                // SAFETY: non-NULL, and the caller guarantees it is writable.
                unsafe { store_timeval(tv, t) };
            }
            // SAFETY: the caller guarantees tz is NULL or writable.
            unsafe { store_tz(tz, zone) };
            0
        }
        Err(e) => fail_with(e),
    }
}

/// `time` with the C library's `time_t`: the value returned is the value stored. On a 32-bit
/// `time_t` past 2038 it fails with EOVERFLOW, as glibc does; if even the system call is refused
/// (seccomp) it returns -1 and leaves `errno` alone (the core does not say why).
///
/// # Safety
/// `t` is NULL or writable for a `time_t`.
#[inline]
pub unsafe fn time(t: *mut libc::time_t) -> libc::time_t {
    // A 64-bit `time_t` is the core's own type: a tail jump into the vDSO's `time`.
    #[cfg(target_pointer_width = "64")]
    // SAFETY: `time_t` is `i64` here; the caller guarantees `t` is NULL or writable.
    return unsafe { vdsotime::time_to(t.cast::<i64>()) };
    #[cfg(target_pointer_width = "32")]
    // SAFETY: forwarded from the caller.
    unsafe {
        time32(t)
    }
}

/// `time` into a 32-bit `time_t`, refusing a value past 2038.
///
/// # Safety
/// `t` is NULL or writable for a `time_t`.
#[cfg(target_pointer_width = "32")]
unsafe fn time32(t: *mut libc::time_t) -> libc::time_t {
    let now = vdsotime::time();
    if now == -1 {
        return -1;
    }
    let Some(now) = libc::time_t::try_from(now).ok() else {
        fail(libc::EOVERFLOW);
        return -1;
    };
    if !t.is_null() {
        // SAFETY: non-NULL, and the caller guarantees it is writable.
        unsafe { t.write_unaligned(now) };
    }
    now
}

/// `time` with a 64-bit result.
///
/// # Safety
/// `t` is NULL or writable for an `i64`.
#[inline]
pub unsafe fn time64(t: *mut i64) -> i64 {
    // SAFETY: the caller guarantees `t` is NULL or writable.
    unsafe { vdsotime::time_to(t) }
}

/// `getcpu`; either pointer may be NULL. From the rseq area where there is one (the CPU
/// alone when no node is asked for), else from the vDSO or by the syscall.
///
/// # Safety
/// `cpu` and `node` are each NULL or writable for an `unsigned int`.
#[inline]
pub unsafe fn getcpu(cpu: *mut c_uint, node: *mut c_uint) -> c_int {
    let fast = if node.is_null() {
        vdsotime::rseq::cpu().map(|c| (c, 0))
    } else {
        vdsotime::rseq::cpu_and_node()
    };
    match fast {
        // SAFETY: forwarded caller contract.
        Some((c, n)) => unsafe { store_cpu(cpu, node, c, n) },
        // SAFETY: forwarded caller contract.
        None => unsafe { getcpu_otherwise(cpu, node) },
    }
}

/// `getcpu` from the vDSO or the syscall: out of line, so the rseq path needs no frame.
///
/// # Safety
/// As [`getcpu`].
#[inline(never)]
unsafe extern "C" fn getcpu_otherwise(cpu: *mut c_uint, node: *mut c_uint) -> c_int {
    match vdsotime::getcpu() {
        // SAFETY: forwarded caller contract.
        Ok((c, n)) => unsafe { store_cpu(cpu, node, c, n) },
        Err(e) => fail_with(e),
    }
}

/// Stores `c` and `n` through whichever of `cpu` and `node` is not NULL; returns 0.
///
/// # Safety
/// As [`getcpu`].
#[inline(always)]
unsafe fn store_cpu(cpu: *mut c_uint, node: *mut c_uint, c: u32, n: u32) -> c_int {
    if !cpu.is_null() {
        // SAFETY: non-NULL, and the caller guarantees it is writable.
        unsafe { cpu.write_unaligned(c) };
    }
    if !node.is_null() {
        // SAFETY: non-NULL, and the caller guarantees it is writable.
        unsafe { node.write_unaligned(n) };
    }
    0
}

/// `sched_getcpu`: the current CPU (from the rseq area where glibc registered one, as
/// glibc's own does), or -1 with `errno`.
#[inline]
pub fn sched_getcpu() -> c_int {
    if let Some(c) = vdsotime::rseq::cpu() {
        // rseq's cpu_id is non-negative as an i32, so this never fails.
        if let Ok(c) = c_int::try_from(c) {
            return c;
        }
    }
    sched_getcpu_otherwise()
}

/// [`sched_getcpu`] from the vDSO or the syscall: out of line and the last call, so the
/// rseq read above needs no frame (a tail jump).
#[cold]
#[inline(never)]
extern "C" fn sched_getcpu_otherwise() -> c_int {
    match vdsotime::current_cpu() {
        Ok(c) => c_int::try_from(c).unwrap_or_else(|_| fail(libc::EOVERFLOW)),
        Err(e) => fail_with(e),
    }
}

/// `getrandom(2)` with libc's convention: the byte count, or -1 with `errno`. The results
/// and errors are the system call's; a NULL `buf` with a non-zero length goes to the
/// system call, which answers `EFAULT` (or `EINVAL` for bad flags, checked first), where
/// the vDSO would write through it.
///
/// # Safety
/// `buf` is NULL or writable for `len` bytes.
#[inline]
pub unsafe fn getrandom(buf: *mut c_void, len: usize, flags: c_uint) -> isize {
    let flags = GrndFlags::from_raw(flags);
    let r = if buf.is_null() {
        // SAFETY: the kernel checks a NULL buffer itself.
        unsafe { vdsotime::syscall::getrandom_to(ptr::null_mut(), len, flags) }
    } else {
        // SAFETY: non-NULL, and the caller guarantees `len` writable bytes.
        unsafe { vdsotime::random::getrandom_to(buf.cast(), len, flags) }
    };
    match r {
        // A count never exceeds the kernel's per-call limit, below isize::MAX.
        Ok(n) => n as isize,
        Err(e) => fail_with(e) as isize,
    }
}

/// `getentropy(3)` as glibc has it: more than 256 bytes fails with `EIO` without a call;
/// otherwise the whole buffer is filled (short reads continued, `EINTR` retried), or -1
/// with the kernel's `errno`. 0 bytes succeed without a call; a NULL buffer with a
/// non-zero length gives the system call's `EFAULT`.
///
/// # Safety
/// `buf` is NULL or writable for `len` bytes.
#[inline]
pub unsafe fn getentropy(buf: *mut c_void, len: usize) -> c_int {
    const MAX: usize = 256;
    if len > MAX {
        return fail(libc::EIO);
    }
    if len == 0 {
        return 0;
    }
    let r = if buf.is_null() {
        // SAFETY: the kernel checks a NULL buffer itself.
        unsafe { vdsotime::syscall::getrandom_to(ptr::null_mut(), len, GrndFlags::NONE) }
            .map(|_| ())
    } else {
        // SAFETY: non-NULL, and the caller guarantees `len` writable bytes.
        unsafe { vdsotime::random::fill_to(buf.cast(), len, GrndFlags::NONE) }
    };
    status(r)
}
