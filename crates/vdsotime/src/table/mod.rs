//! The function table: one `AtomicPtr` per entry point, as in rustix's `linux_raw`
//! backend. Each starts at a `#[cold]` initializer with the entry's own signature,
//! which binds that entry alone (one look at the vDSO, one symbol lookup) and then makes
//! the call; afterwards a call is one relaxed load and one indirect call. A process
//! pays only for the functions it uses; [`crate::init`] binds them all at once.
//!
//! Resolution is lock-free and idempotent: threads (or signal handlers) that race the
//! first call each parse the same image and store the same pointers. Nothing here
//! allocates, so every path is async-signal-safe.

use crate::elf::NativeImage;
use crate::{ClockId, Path, Timespec, Timeval, Timezone};
use core::ffi::c_void;
use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering::Relaxed};

/// `clock_gettime` / `clock_getres` writing a 64-bit `Timespec`.
pub(crate) type ClockFn = unsafe extern "C" fn(i32, *mut Timespec) -> i32;
/// `gettimeofday` writing a 64-bit `Timeval`.
pub(crate) type TodFn = unsafe extern "C" fn(*mut Timeval, *mut Timezone) -> i32;
/// `time`, returning 64-bit seconds.
pub(crate) type TimeFn = unsafe extern "C" fn(*mut i64) -> i64;
/// `getcpu`.
pub(crate) type CpuFn = unsafe extern "C" fn(*mut u32, *mut u32, *mut c_void) -> i32;

/// The entry points, indexing [`SYMBOL`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum Slot {
    ClockGettime,
    ClockGetres,
    Gettimeofday,
    Time,
    Getcpu,
}

/// The address of the vDSO symbol each entry is bound to (0: none): read by the call
/// shims that cannot be the symbol itself (powerpc, time32), and by [`crate::raw`].
static SYMBOL: [AtomicUsize; 5] = [const { AtomicUsize::new(0) }; 5];

/// Declares the entries: one `AtomicPtr` each in a cache line of their own (written
/// once, read on every call, so no other data's writes may bounce the line between
/// CPUs), the accessor the hot path uses, the `#[cold]` initializer each starts at, and
/// the function that binds it from an image.
macro_rules! entries {
    ($( $slot:ident, $get:ident: $ty:ty = $init:ident($($arg:ident: $argty:ty),*) -> $ret:ty; )*) => {
        #[repr(C, align(64))]
        struct Entries {
            $( $get: AtomicPtr<()>, )*
        }

        static ENTRIES: Entries = Entries {
            $( $get: AtomicPtr::new($init as *mut ()), )*
        };

        /// Binds one entry from `v`: stores its symbol, then what the entry calls.
        mod store {
            use super::*;
            $(
                pub(super) fn $get(v: Option<&NativeImage<'static>>) {
                    let b = bind::$get(v);
                    SYMBOL[Slot::$slot as usize].store(b.symbol, Relaxed);
                    ENTRIES.$get.store(b.call as *mut (), Relaxed);
                }
            )*
        }

        $(
            /// The function currently bound to this entry.
            #[inline(always)]
            pub(crate) fn $get() -> $ty {
                let p = ENTRIES.$get.load(Relaxed);
                // SAFETY: the atomic only ever holds functions of type `$ty`: its
                // initializer, a syscall fallback, a shim, or a vDSO symbol whose C
                // signature `bind` matched to `$ty`.
                unsafe { core::mem::transmute::<*mut (), $ty>(p) }
            }

            #[cold]
            #[inline(never)]
            unsafe extern "C" fn $init($($arg: $argty),*) -> $ret {
                store::$get(crate::vdso::own().as_ref());
                // SAFETY: the caller's arguments are forwarded unchanged.
                unsafe { $get()($($arg),*) }
            }
        )*

        /// Binds every entry, from one look at the vDSO.
        #[cold]
        #[inline(never)]
        pub(crate) fn resolve_all() {
            let v = crate::vdso::own();
            $( store::$get(v.as_ref()); )*
        }

        /// Binds `slot`'s entry.
        #[cold]
        #[inline(never)]
        fn resolve(slot: Slot) {
            let v = crate::vdso::own();
            match slot {
                $( Slot::$slot => store::$get(v.as_ref()), )*
            }
        }

        /// Puts every entry back to its initializer (after the caller named a vDSO).
        pub(crate) fn reset() {
            $( ENTRIES.$get.store($init as *mut (), Relaxed); )*
        }

        /// Whether `slot`'s entry still points at its initializer.
        fn unresolved(slot: Slot) -> bool {
            match slot {
                $( Slot::$slot => ENTRIES.$get.load(Relaxed) == $init as *mut (), )*
            }
        }
    };
}

entries! {
    ClockGettime, clock_gettime: ClockFn = init_clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    ClockGetres, clock_getres: ClockFn = init_clock_getres(clock: i32, ts: *mut Timespec) -> i32;
    Gettimeofday, gettimeofday: TodFn = init_gettimeofday(tv: *mut Timeval, tz: *mut Timezone) -> i32;
    Time, time: TimeFn = init_time(t: *mut i64) -> i64;
    Getcpu, getcpu: CpuFn = init_getcpu(cpu: *mut u32, node: *mut u32, cache: *mut c_void) -> i32;
}

/// The address of `slot`'s symbol, binding that entry first if needed (shims and `raw`).
pub(crate) fn symbol(slot: Slot) -> usize {
    if unresolved(slot) {
        resolve(slot);
    }
    SYMBOL[slot as usize].load(Relaxed)
}

/// How `slot`'s entry is served in this process (whether or not it is bound yet).
pub(crate) fn path(slot: Slot) -> Path {
    let v = crate::vdso::own();
    let v = v.as_ref();
    match slot {
        Slot::ClockGettime => bind::clock_gettime(v).path,
        Slot::ClockGetres => bind::clock_getres(v).path,
        Slot::Gettimeofday => bind::gettimeofday(v).path,
        Slot::Time => bind::time(v).path,
        Slot::Getcpu => bind::getcpu(v).path,
    }
}

/// The path `clock_gettime`/`clock_getres` take for `clock`: every id is handed to the
/// entry, but only the clocks the vDSO answers itself are served by it; for the others
/// its fallback makes the system call. An auxiliary clock is answered by the vDSO of a
/// kernel that has it enabled (Linux 6.17+), which the syscall tells.
pub(crate) fn clock_path(clock: ClockId, entry: Path) -> Path {
    let served =
        clock.vdso_served() || (clock.is_aux() && crate::syscall::clock_getres(clock).is_ok());
    if served {
        entry
    } else {
        Path::Syscall
    }
}

mod bind;
mod shim;

#[cfg(test)]
mod tests {
    use super::*;

    const EINVAL: i32 = -(linux_raw_sys::errno::EINVAL as i32);

    /// The entries themselves (not the public calls, which send invalid ids straight to
    /// the syscall) must report errors as `-errno`: this is what exercises powerpc's
    /// CR0.SO convention through the call shim, and the vDSO's own fallback elsewhere.
    #[test]
    fn entries_return_minus_errno_for_invalid_clocks() {
        let mut ts = Timespec::default();
        for id in [-1, 12, i32::MAX] {
            // SAFETY: `ts` is writable.
            let got = unsafe { clock_gettime()(id, &mut ts) };
            assert_eq!(got, EINVAL, "clock_gettime({id})");
            // SAFETY: `ts` is writable.
            let got = unsafe { clock_getres()(id, &mut ts) };
            assert_eq!(got, EINVAL, "clock_getres({id})");
        }
        // SAFETY: `ts` is writable.
        let got = unsafe { clock_gettime()(ClockId::MONOTONIC.as_raw(), &mut ts) };
        assert_eq!(got, 0);
        assert!(ts.tv_sec > 0 || ts.tv_nsec > 0);
    }
}
