//! The resolved vDSO symbols themselves, for benchmarks that call them with no
//! wrapper at all (the "vdso-raw" column of `vdsotime bench`). Each getter is `Some`
//! only where the symbol's C signature is exactly the type given: not on powerpc
//! (which needs an asm call sequence) and not for time32 symbols on 32-bit targets.

use crate::table::{self, Slot};
use core::ffi::{c_long, c_void};

pub use crate::{Timespec, Timezone};

/// The kernel's native `struct timeval` (`long` fields).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelTimeval {
    /// Seconds.
    pub tv_sec: c_long,
    /// Microseconds.
    pub tv_usec: c_long,
}

/// `int clock_gettime(clockid_t, struct __kernel_timespec *)`.
pub type ClockGettimeFn = unsafe extern "C" fn(i32, *mut Timespec) -> i32;
/// `int clock_getres(clockid_t, struct __kernel_timespec *)`.
pub type ClockGetresFn = unsafe extern "C" fn(i32, *mut Timespec) -> i32;
/// `int gettimeofday(struct timeval *, struct timezone *)`.
pub type GettimeofdayFn = unsafe extern "C" fn(*mut KernelTimeval, *mut Timezone) -> i32;
/// `time_t time(time_t *)`.
pub type TimeFn = unsafe extern "C" fn(*mut c_long) -> c_long;
/// `int getcpu(unsigned *, unsigned *, void *)`.
pub type GetcpuFn = unsafe extern "C" fn(*mut u32, *mut u32, *mut c_void) -> i32;

/// The symbol bound to `slot` if the entry calls it directly. `entry` is read only
/// after `table::symbol` has resolved the table, so a fresh process gets the answer too.
fn direct(slot: Slot, entry: impl FnOnce() -> usize) -> Option<usize> {
    let addr = table::symbol(slot);
    (addr != 0 && addr == entry()).then_some(addr)
}

macro_rules! getters {
    ($( $(#[$doc:meta])* $name:ident: $ty:ty = $slot:ident; )*) => {
        $(
            $(#[$doc])*
            pub fn $name() -> Option<$ty> {
                let addr = direct(Slot::$slot, || table::$name() as usize)?;
                // SAFETY: the table calls this symbol directly as its entry, which it
                // does only where the symbol's C signature is this type's.
                Some(unsafe { core::mem::transmute::<usize, $ty>(addr) })
            }
        )*
    };
}

getters! {
    /// The vDSO's `clock_gettime` (the time64 one on 32-bit targets).
    ///
    /// `None` where no vDSO symbol is called directly: no vDSO, no such symbol, or an
    /// architecture whose call needs a shim (powerpc). A raw symbol has no fallback and
    /// no error mapping: it returns what the vDSO returns (on most architectures 0, or a
    /// negative errno for an id the vDSO passed to the kernel). Use
    /// [`crate::clock_gettime`] for the errors the kernel gives.
    ///
    /// # Example
    ///
    /// ```
    /// use vdsotime::{raw, ClockId, Timespec};
    /// if let Some(f) = raw::clock_gettime() {
    ///     let mut ts = Timespec::default();
    ///     // SAFETY: `ts` is a writable kernel timespec, as the symbol's C signature asks.
    ///     assert_eq!(unsafe { f(ClockId::MONOTONIC.as_raw(), &mut ts) }, 0);
    ///     assert!(ts.is_normalized());
    /// }
    /// ```
    clock_gettime: ClockGettimeFn = ClockGettime;
    /// The vDSO's `clock_getres`.
    ///
    /// `None`, no fallback and no error mapping as for [`clock_gettime`].
    clock_getres: ClockGetresFn = ClockGetres;
    /// The vDSO's `gettimeofday` (64-bit targets).
    ///
    /// `None`, no fallback and no error mapping as for [`clock_gettime`].
    gettimeofday: GettimeofdayFn = Gettimeofday;
    /// The vDSO's `time` (64-bit targets that export it).
    ///
    /// `None`, no fallback and no error mapping as for [`clock_gettime`].
    time: TimeFn = Time;
    /// The vDSO's `getcpu`.
    ///
    /// `None`, no fallback and no error mapping as for [`clock_gettime`].
    getcpu: GetcpuFn = Getcpu;
}

/// The function [`crate::time`] calls, with the C signature of a 64-bit `time`: the vDSO's
/// `time` where it has one, else the coarse-clock shim or the syscall (which return -1,
/// without `errno`, only if the kernel refuses the call). For a C library's IFUNC
/// resolver, which can bind `time` to it so that a call makes no extra jump.
///
/// # Example
///
/// ```
/// let time = vdsotime::raw::time_entry();
/// // SAFETY: a null pointer is allowed, as for time(2).
/// let now = unsafe { time(core::ptr::null_mut()) };
/// assert!(now > 1_600_000_000);
/// ```
#[cfg(target_pointer_width = "64")]
pub fn time_entry() -> unsafe extern "C" fn(*mut i64) -> i64 {
    table::symbol(Slot::Time); // resolves the table if nothing has yet
    table::time()
}
