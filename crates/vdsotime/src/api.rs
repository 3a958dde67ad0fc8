//! The public calls: each is `#[inline]`, loads its entry from the table, makes one
//! indirect call and checks the result; everything else is `#[cold]` and out of line.
//!
//! Fallback rules, as glibc's: every clock id goes to the vDSO's `clock_gettime`, which
//! answers the clocks it can serve and makes the system call itself for the rest
//! (CPU-time, alarm, invalid and dynamic ids; auxiliary clocks before Linux 6.17), so a
//! call makes at most one system call and no per-call "is this clock served" test is
//! needed. An error is final: it is the kernel's own answer, whether the vDSO's
//! fallback or, without a vDSO, our syscall made the call. (Where an architecture's old
//! vDSOs answered `ENOSYS` without asking the kernel, the table binds a shim that asks
//! it: see [`crate::arch::ArchTable::enosys_means_unserved`].)
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

/// `time` with the C signature: also stores the result through `t` unless it is null.
/// For C shims (`libvdsotime`, the preload), where it compiles to a tail jump.
///
/// # Fallback
///
/// As [`time`].
///
/// # Errors
///
/// As [`time`]: `-1` only if even the system call fails.
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
/// As [`clock_gettime`].
///
/// # Errors
///
/// As [`clock_gettime`].
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
/// As [`clock_getres`].
///
/// # Errors
///
/// As [`clock_getres`].
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
/// As [`gettimeofday`].
///
/// # Errors
///
/// As [`gettimeofday`].
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

/// The error: a nonzero result is `-errno` from the kernel. Anything else (no kernel
/// returns it) is taken as the clock being refused, so a result that was never written
/// is never read. Inline, so a C caller sets `errno` with one call on the error path; the
/// call to [`not_an_errno`] keeps the compiler from computing all this, branch-free, on
/// the success path as well (it did, four instructions per call, when this was a select).
#[inline(always)]
fn failed(ret: i32) -> Errno {
    match Errno::from_ret(ret as isize) {
        Some(e) => e,
        None => not_an_errno(),
    }
}

/// A nonzero result that is not `-errno`.
#[cold]
#[inline(never)]
fn not_an_errno() -> Errno {
    Errno::EINVAL
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

/// Does now what the first call of each function would otherwise do: finds and parses
/// the vDSO, binds every function to its symbol and looks for glibc's rseq area. Optional:
/// every call does its own part of this on first use, and a program that never calls
/// `init` never pays for the functions it does not use. Call it at start-up where the
/// first reading must cost what every later one does (glibc pays the same at every
/// process start). Lock-free, allocation-free and async-signal-safe like every call;
/// calling it again does the work again, harmlessly.
///
/// **Call it before entering a sandbox.** The first use of the vDSO makes one system call
/// to confirm the vDSO is still mapped (docs/reliability.md names it). A seccomp allowlist
/// whose default action kills (systemd's `SystemCallFilter=`, a hand-written filter) would
/// kill the process on that first call. After `init`, clock_gettime and clock_getres of
/// the clocks the vDSO serves, gettimeofday, time and getcpu (where the vDSO or glibc's
/// rseq area answers it) make no system call of their own: a filter that allows none of
/// them leaves them working wherever the vDSO serves them (a clock it does not serve is a
/// system call, as with the C library). [`crate::path`] and [`crate::vdso`] confirm the
/// vDSO is still mapped at each call: ask them before entering the sandbox. getrandom
/// maps its per-thread state on first use: allow `mmap` and `getrandom` for it.
///
/// ```
/// vdsotime::init();
/// let t = vdsotime::clock_gettime(vdsotime::ClockId::MONOTONIC)?; // no set-up left to do
/// # let _ = t;
/// # Ok::<(), vdsotime::Errno>(())
/// ```
pub fn init() {
    table::resolve_all();
    crate::rseq::resolve();
}

/// Uses the vDSO image at `addr` instead of looking in the auxiliary vector; `addr`
/// 0 means "no vDSO, use syscalls". For runtimes and `#![no_main]` programs that have
/// the address already. An image that fails validation is ignored (syscalls).
///
/// The image's functions are then called: it must be the vDSO the kernel mapped into
/// this process, not a copy or a file read into memory. It may be called again at any
/// time: a call or [`crate::vdso`] racing it, on another thread or in a signal handler,
/// uses the old image or the new one, each whole.
///
/// # Fallback
///
/// Address 0, or an image that fails validation, means no vDSO: every call is then the
/// system call.
///
/// # Errors
///
/// None are returned: an image that fails validation is ignored as described.
///
/// # Safety
/// `addr` must be 0 or the start of the kernel-mapped vDSO of this process (its code is
/// executed), at least 4 KiB long, which stays mapped and unchanged for the life of the
/// process: every image ever given must, as racing calls may still use an earlier one.
///
/// # Example
///
/// ```
/// use vdsotime::{clock_gettime, init_from_image, path, ClockId, Function, Path};
/// // SAFETY: 0 is always allowed: no vDSO.
/// unsafe { init_from_image(0) };
/// assert_eq!(path(Function::ClockGettime(ClockId::MONOTONIC)), Path::Syscall);
/// assert!(clock_gettime(ClockId::MONOTONIC).is_ok()); // by the system call
/// ```
pub unsafe fn init_from_image(addr: usize) {
    if addr == 0 {
        crate::vdso::publish_absent();
    } else {
        // SAFETY: forwarded from the caller.
        unsafe { crate::vdso::publish(addr) };
    }
    table::reset();
    crate::random::reset();
}

/// Like [`init_from_image`], with the address taken from an auxiliary vector.
///
/// # Fallback
///
/// A vector without `AT_SYSINFO_EHDR` (or with 0 there) means no vDSO: every call is
/// then the system call.
///
/// # Errors
///
/// None are returned, as for [`init_from_image`].
///
/// # Safety
/// `auxv` must point to a readable, `AT_NULL`-terminated auxiliary vector (the one
/// after `envp` on the initial stack), and the rules of [`init_from_image`] apply.
///
/// # Example
///
/// ```
/// use vdsotime::{clock_gettime, init_from_auxv, path, ClockId, Function, Path};
/// let auxv = [0usize, 0]; // AT_NULL alone: no AT_SYSINFO_EHDR
/// // SAFETY: `auxv` is a readable, AT_NULL-terminated vector naming no image.
/// unsafe { init_from_auxv(auxv.as_ptr()) };
/// assert_eq!(path(Function::ClockGettime(ClockId::MONOTONIC)), Path::Syscall);
/// assert!(clock_gettime(ClockId::MONOTONIC).is_ok());
/// ```
pub unsafe fn init_from_auxv(auxv: *const usize) {
    // SAFETY: forwarded from the caller.
    unsafe {
        init_from_image(crate::auxv::from_vector(auxv, crate::auxv::AT_SYSINFO_EHDR).unwrap_or(0))
    }
}
