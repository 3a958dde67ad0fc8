//! The function table: one `AtomicPtr` per entry point, as in rustix's `linux_raw`
//! backend. Each starts at a `#[cold]` initializer with the entry's own signature,
//! which resolves every entry at once and then makes the call; afterwards a call is
//! one relaxed load and one indirect call.
//!
//! Resolution is lock-free and idempotent: threads (or signal handlers) that race the
//! first call each parse the same image and store the same pointers. Nothing here
//! allocates, so every path is async-signal-safe.

use crate::arch::{self, ArchTable};
use crate::syscall::{raw_clock_getres, raw_clock_gettime, raw_getcpu, raw_gettimeofday, raw_time};
use crate::{ClockId, Path, Timespec, Timeval, Timezone, Vdso};
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
/// CPUs), the accessor the hot path uses, and the `#[cold]` initializer each starts at.
macro_rules! entries {
    ($( $slot:ident, $get:ident: $ty:ty = $init:ident($($arg:ident: $argty:ty),*) -> $ret:ty; )*) => {
        #[repr(C, align(64))]
        struct Entries {
            $( $get: AtomicPtr<()>, )*
        }

        static ENTRIES: Entries = Entries {
            $( $get: AtomicPtr::new($init as *mut ()), )*
        };

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
                resolve_all();
                // SAFETY: the caller's arguments are forwarded unchanged.
                unsafe { $get()($($arg),*) }
            }
        )*

        /// Binds every entry, from one look at the vDSO.
        #[cold]
        #[inline(never)]
        pub(crate) fn resolve_all() {
            crate::rseq::resolve();
            let b = bind(crate::vdso().as_ref());
            $(
                SYMBOL[Slot::$slot as usize].store(b.$get.symbol, Relaxed);
                ENTRIES.$get.store(b.$get.call as *mut (), Relaxed);
            )*
        }

        /// Puts every entry back to its initializer (after the caller named a vDSO).
        pub(crate) fn reset() {
            $( ENTRIES.$get.store($init as *mut (), Relaxed); )*
        }

        /// Whether an entry still points at its initializer.
        fn unresolved() -> bool {
            false $( || ENTRIES.$get.load(Relaxed) == $init as *mut () )*
        }

        /// The binding of every entry.
        pub(crate) struct Bindings {
            $( pub(crate) $get: Binding<$ty>, )*
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

/// How one entry is served.
pub(crate) struct Binding<F> {
    /// What the entry's atomic will hold.
    pub(crate) call: F,
    /// The vDSO symbol's address, 0 when none is used.
    pub(crate) symbol: usize,
    /// The path, for [`crate::path`].
    pub(crate) path: Path,
}

/// The address of `slot`'s symbol, resolving first if needed (shims and `raw`).
pub(crate) fn symbol(slot: Slot) -> usize {
    if unresolved() {
        resolve_all();
    }
    SYMBOL[slot as usize].load(Relaxed)
}

/// A symbol of the native table found in `v` with the table's version.
struct Found {
    name: &'static str,
    version: Option<&'static str>,
    address: usize,
}

impl Found {
    fn path(&self) -> Path {
        Path::Vdso {
            symbol: self.name,
            version: self.version,
        }
    }

    fn bind<F>(&self, call: F) -> Binding<F> {
        Binding {
            call,
            symbol: self.address,
            path: self.path(),
        }
    }
}

fn find(v: Option<&Vdso<'static>>, t: &ArchTable, name: Option<&'static str>) -> Option<Found> {
    let name = name?;
    let sym = v?.lookup(name, Some(t.version))?;
    Some(Found {
        name,
        version: sym.version,
        address: sym.address,
    })
}

fn syscall<F>(call: F) -> Binding<F> {
    Binding {
        call,
        symbol: 0,
        path: Path::Syscall,
    }
}

/// Calls a vDSO symbol directly where its C signature is ours, through the
/// architecture's shim where it is not (powerpc's error convention), or through
/// `$enosys` where the vDSO may answer `ENOSYS` without asking the kernel.
macro_rules! direct {
    ($found:expr, $ty:ty, $shim:path, $enosys:path) => {{
        let found = $found;
        #[cfg(not(target_arch = "powerpc64"))]
        let call: $ty = if arch::NATIVE.enosys_means_unserved {
            $enosys
        } else {
            // SAFETY: `found.address` is the code of the native table's symbol for this
            // entry, whose C signature is `$ty` on this (non-powerpc) architecture.
            unsafe { core::mem::transmute::<usize, $ty>(found.address) }
        };
        #[cfg(target_arch = "powerpc64")]
        let call: $ty = $shim;
        found.bind(call)
    }};
    ($found:expr, $ty:ty, $shim:path) => {{
        let found = $found;
        #[cfg(not(target_arch = "powerpc64"))]
        // SAFETY: as above.
        let call = unsafe { core::mem::transmute::<usize, $ty>(found.address) };
        #[cfg(target_arch = "powerpc64")]
        let call: $ty = $shim;
        found.bind(call)
    }};
}

/// Chooses how each entry is served, from the vDSO (if any) and the native table.
pub(crate) fn bind(v: Option<&Vdso<'static>>) -> Bindings {
    let t = arch::NATIVE;
    let get = |name| find(v, t, name);
    // The time64 clock symbol, unless this arch requires its time32 twin beside it.
    let time64 =
        |name64, name32| get(name64).filter(|_| !t.time64_needs_time32 || get(name32).is_some());

    let clock_gettime = match (
        time64(t.clock_gettime64, t.clock_gettime),
        get(t.clock_gettime),
    ) {
        (Some(f), _) => direct!(f, ClockFn, shim::clock_gettime, shim::clock_gettime_enosys),
        #[cfg(target_pointer_width = "64")]
        (None, Some(f)) => direct!(f, ClockFn, shim::clock_gettime, shim::clock_gettime_enosys),
        #[cfg(target_pointer_width = "32")]
        (None, Some(f)) => f.bind(shim::clock_gettime_time32 as ClockFn),
        (None, None) => syscall(raw_clock_gettime as ClockFn),
    };
    let clock_getres = match (
        time64(t.clock_getres64, t.clock_getres),
        get(t.clock_getres),
    ) {
        (Some(f), _) => direct!(f, ClockFn, shim::clock_getres, shim::clock_getres_enosys),
        #[cfg(target_pointer_width = "64")]
        (None, Some(f)) => direct!(f, ClockFn, shim::clock_getres, shim::clock_getres_enosys),
        #[cfg(target_pointer_width = "32")]
        (None, Some(f)) => f.bind(shim::clock_getres_time32 as ClockFn),
        (None, None) => syscall(raw_clock_getres as ClockFn),
    };
    let gettimeofday = match get(t.gettimeofday) {
        #[cfg(target_pointer_width = "64")]
        Some(f) => direct!(f, TodFn, shim::gettimeofday, shim::gettimeofday_enosys),
        #[cfg(target_pointer_width = "32")]
        Some(f) => f.bind(shim::gettimeofday_time32 as TodFn),
        None => syscall(raw_gettimeofday as TodFn),
    };
    // `time` is the coarse wall clock's seconds: where the vDSO has no 64-bit `time`,
    // its coarse clock answers in a few ns, far faster than the syscall.
    let time = match get(t.time).filter(|_| cfg!(target_pointer_width = "64")) {
        Some(f) => direct!(f, TimeFn, shim::time),
        None => match &clock_gettime.path {
            Path::Vdso { symbol, version } => Binding {
                call: shim::time_from_coarse as TimeFn,
                symbol: 0,
                path: Path::VdsoCoarse {
                    symbol,
                    version: *version,
                },
            },
            _ => syscall(raw_time as TimeFn),
        },
    };
    let getcpu = match get(t.getcpu) {
        Some(f) => direct!(f, CpuFn, shim::getcpu),
        None => syscall(raw_getcpu as CpuFn),
    };
    Bindings {
        clock_gettime,
        clock_getres,
        gettimeofday,
        time,
        getcpu,
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
