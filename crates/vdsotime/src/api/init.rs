//! Binding ahead of the first call, or to an image the caller names.

use crate::table;

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
