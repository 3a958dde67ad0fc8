//! What `bench` and `doctor` time: each library function through each path.
//! Every probe passes its arguments through `black_box` and consumes its result
//! the way a caller does, reading each field into `black_box`, so the optimizer can
//! neither hoist nor drop the call and every column pays the same for the result.
//! (Copying a whole timespec with one 16-byte load right after the vDSO's two 8-byte
//! stores would add a store-forwarding stall to whichever column the compiler happened
//! to emit it for.)

use std::ffi::c_long;
use std::hint::black_box;
use std::mem::MaybeUninit;
use std::ptr;

use serde::{Deserialize, Serialize};
use vdsotime::{ClockId, Function, GrndFlags};

use crate::measure::crates;
use crate::measure::getrandom;
use crate::measure::{field, Probe};
use crate::names;

/// The ways one function is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Impl {
    /// The library's public function (vDSO or its exact fallback).
    Vdsotime,
    /// The resolved vDSO symbol called directly, no wrapper: the floor.
    VdsoRaw,
    /// The `libc` crate, i.e. the system C library.
    Libc,
    /// The rustix crate, where it offers the call (its own vDSO lookup).
    Rustix,
    /// The standard library, where it reads that clock (`Instant`, `SystemTime`).
    Std,
    /// `vdsotime::syscall`, the forced fallback.
    Syscall,
}

impl Impl {
    /// Every column of the bench table, in order.
    pub const ALL: [Impl; 6] = [
        Impl::Vdsotime,
        Impl::VdsoRaw,
        Impl::Libc,
        Impl::Rustix,
        Impl::Std,
        Impl::Syscall,
    ];

    /// Column name, also the JSON `path`.
    pub fn name(self) -> &'static str {
        match self {
            Impl::Vdsotime => "vdsotime",
            Impl::VdsoRaw => "vdso-raw",
            Impl::Libc => "libc",
            Impl::Rustix => "rustix",
            Impl::Std => "std",
            Impl::Syscall => "syscall",
        }
    }
}

/// The rows of the full bench table: clock_gettime for every named clock, the first
/// invalid id, the first CLOCK_AUX id and every other enabled one, clock_getres of a high-resolution, a coarse
/// and a CPU-time clock, then gettimeofday, time and getcpu.
pub fn full_rows() -> Vec<Function> {
    let mut v: Vec<Function> = ClockId::ALL
        .into_iter()
        .map(Function::ClockGettime)
        .collect();
    v.push(Function::ClockGettime(names::UNSUPPORTED));
    v.push(Function::ClockGettime(names::AUX));
    let enabled = crate::aux_clocks::enabled().into_iter();
    v.extend(
        enabled
            .filter(|&c| c != names::AUX)
            .map(Function::ClockGettime),
    );
    v.extend([
        Function::ClockGetres(ClockId::MONOTONIC),
        Function::ClockGetres(ClockId::MONOTONIC_COARSE),
        Function::ClockGetres(ClockId::PROCESS_CPUTIME_ID),
        Function::Gettimeofday,
        Function::Time,
        Function::Getcpu,
    ]);
    v
}

/// The clocks the generic vDSO serves itself when the clocksource allows
/// (kernel lib/vdso): high-resolution and coarse ones. CPU-time and alarm
/// clocks always go to the kernel.
pub const VDSO_CLOCKS: [ClockId; 7] = [
    ClockId::REALTIME,
    ClockId::MONOTONIC,
    ClockId::MONOTONIC_RAW,
    ClockId::REALTIME_COARSE,
    ClockId::MONOTONIC_COARSE,
    ClockId::BOOTTIME,
    ClockId::TAI,
];

/// The rows of the short table (default run, doctor): what the vDSO should serve.
pub fn short_rows() -> Vec<Function> {
    let mut v: Vec<Function> = VDSO_CLOCKS
        .into_iter()
        .map(Function::ClockGettime)
        .collect();
    v.extend([Function::Gettimeofday, Function::Time, Function::Getcpu]);
    v
}

/// The rows the doctor times and proves: the short table's, then clock_gettime of each
/// enabled auxiliary clock (enabled because something reads it, so its path matters).
pub fn doctor_rows() -> Vec<Function> {
    let mut v = short_rows();
    v.extend(
        crate::aux_clocks::enabled()
            .into_iter()
            .map(Function::ClockGettime),
    );
    v
}

/// A probe for `f` through `imp`, or `None` where that path does not exist (no vDSO
/// symbol for it on this architecture, no such call in rustix or std).
pub fn probe(f: Function, imp: Impl) -> Option<Probe> {
    match imp {
        Impl::Vdsotime => Some(vdsotime_probe(f)),
        #[cfg(target_pointer_width = "64")]
        Impl::VdsoRaw => raw_probe(f),
        // Where the vDSO has only a time32 symbol, that symbol is the floor.
        #[cfg(target_pointer_width = "32")]
        Impl::VdsoRaw => raw_probe(f).or_else(|| crate::measure::raw32::probe(f)),
        Impl::Libc => Some(libc_probe(f)),
        Impl::Rustix => crates::rustix_probe(f),
        Impl::Std => crates::std_probe(f),
        Impl::Syscall => Some(syscall_probe(f)),
    }
}

/// Consumes a library result field by field.
#[inline(always)]
fn ts(r: Result<vdsotime::Timespec, vdsotime::Errno>) {
    match r {
        Ok(t) => {
            field(t.tv_sec);
            field(t.tv_nsec);
        }
        Err(e) => drop(black_box(e)),
    }
}

/// Consumes a library timeval field by field.
#[inline(always)]
fn tv(r: Result<vdsotime::Timeval, vdsotime::Errno>) {
    match r {
        Ok(t) => {
            field(t.tv_sec);
            field(t.tv_usec);
        }
        Err(e) => drop(black_box(e)),
    }
}

/// Consumes a library getcpu result.
#[inline(always)]
fn cpu(r: Result<(u32, u32), vdsotime::Errno>) {
    match r {
        Ok((c, n)) => {
            black_box(c);
            black_box(n);
        }
        Err(e) => drop(black_box(e)),
    }
}

/// Consumes a C-style result: the return code, and the two output fields when it
/// is 0 (`read` is only called then).
#[inline(always)]
fn fields<A: Into<i64>, B: Into<i64>>(ret: i32, read: impl FnOnce() -> (A, B)) {
    if black_box(ret) == 0 {
        let (a, b) = read();
        field(a.into());
        field(b.into());
    }
}

fn vdsotime_probe(f: Function) -> Probe {
    match f {
        Function::ClockGettime(c) => Probe::new(move || {
            ts(vdsotime::clock_gettime(black_box(c)));
        }),
        Function::ClockGetres(c) => Probe::new(move || {
            ts(vdsotime::clock_getres(black_box(c)));
        }),
        Function::Gettimeofday => Probe::new(|| {
            tv(vdsotime::gettimeofday());
        }),
        Function::Time => Probe::new(|| {
            black_box(vdsotime::time());
        }),
        Function::Getcpu => Probe::new(|| {
            cpu(vdsotime::getcpu());
        }),
        Function::Getrandom => getrandom::probe(getrandom::Path::Vdsotime, 16),
    }
}

fn syscall_probe(f: Function) -> Probe {
    match f {
        Function::ClockGettime(c) => Probe::new(move || {
            ts(vdsotime::syscall::clock_gettime(black_box(c)));
        }),
        Function::ClockGetres(c) => Probe::new(move || {
            ts(vdsotime::syscall::clock_getres(black_box(c)));
        }),
        Function::Gettimeofday => Probe::new(|| {
            tv(vdsotime::syscall::gettimeofday());
        }),
        Function::Time => Probe::new(|| {
            black_box(vdsotime::syscall::time());
        }),
        Function::Getcpu => Probe::new(|| {
            cpu(vdsotime::syscall::getcpu());
        }),
        Function::Getrandom => getrandom::probe(getrandom::Path::Syscall, 16),
    }
}

/// Calls the library's entry for `f` once: the library binds each entry lazily on
/// its first call, and `vdsotime::raw` only answers for bound entries.
fn bind(f: Function) {
    match f {
        Function::ClockGettime(_) => drop(vdsotime::clock_gettime(ClockId::MONOTONIC)),
        Function::ClockGetres(_) => drop(vdsotime::clock_getres(ClockId::MONOTONIC)),
        Function::Gettimeofday => drop(vdsotime::gettimeofday()),
        Function::Time => drop(vdsotime::time()),
        Function::Getcpu => drop(vdsotime::getcpu()),
        Function::Getrandom => drop(vdsotime::getrandom(&mut [0; 16], GrndFlags::NONE)),
    }
}

fn raw_probe(f: Function) -> Option<Probe> {
    use vdsotime::raw;
    bind(f);
    Some(match f {
        Function::ClockGettime(c) => {
            let p = raw::clock_gettime()?;
            Probe::new(move || {
                let mut ts = MaybeUninit::<vdsotime::Timespec>::uninit();
                // SAFETY: `p` is the vDSO's clock_gettime, resolved by the library with
                // this exact signature; `ts` is valid for writes.
                let r = unsafe { p(black_box(c.as_raw()), ts.as_mut_ptr()) };
                // SAFETY: 0 means the call wrote `ts`.
                fields(r, || unsafe {
                    (ts.assume_init_ref().tv_sec, ts.assume_init_ref().tv_nsec)
                });
            })
        }
        Function::ClockGetres(c) => {
            let p = raw::clock_getres()?;
            Probe::new(move || {
                let mut ts = MaybeUninit::<vdsotime::Timespec>::uninit();
                // SAFETY: as above, the resolved clock_getres with its signature.
                let r = unsafe { p(black_box(c.as_raw()), ts.as_mut_ptr()) };
                // SAFETY: 0 means the call wrote `ts`.
                fields(r, || unsafe {
                    (ts.assume_init_ref().tv_sec, ts.assume_init_ref().tv_nsec)
                });
            })
        }
        Function::Gettimeofday => {
            let p = raw::gettimeofday()?;
            Probe::new(move || {
                let mut tv = MaybeUninit::<raw::KernelTimeval>::uninit();
                // SAFETY: the resolved gettimeofday; `tv` is writable, a NULL
                // timezone is allowed by the kernel ABI.
                let r = unsafe { p(tv.as_mut_ptr(), ptr::null_mut()) };
                // SAFETY: 0 means the call wrote `tv`.
                fields(r, || unsafe {
                    (tv.assume_init_ref().tv_sec, tv.assume_init_ref().tv_usec)
                });
            })
        }
        Function::Time => {
            let p = raw::time()?;
            Probe::new(move || {
                // SAFETY: the resolved time; NULL means "return the value only".
                let t: c_long = unsafe { p(black_box(ptr::null_mut())) };
                black_box(t);
            })
        }
        Function::Getcpu => {
            let p = raw::getcpu()?;
            Probe::new(move || {
                let (mut cpu, mut node) = (0u32, 0u32);
                // SAFETY: the resolved getcpu; both outputs are valid u32s, the
                // cache argument is unused by the kernel and may be NULL.
                let r = unsafe { p(&mut cpu, &mut node, ptr::null_mut()) };
                if black_box(r) == 0 {
                    black_box(cpu);
                    black_box(node);
                }
            })
        }
        // `vdsotime::raw` hands out no getrandom: it needs a state (the `vdso-state`
        // column of `bench-getrandom` is that floor).
        Function::Getrandom => return None,
    })
}

fn libc_probe(f: Function) -> Probe {
    match f {
        Function::ClockGettime(c) => Probe::new(move || {
            let mut ts = MaybeUninit::<libc::timespec>::uninit();
            // SAFETY: `ts` is valid for writes; any clock id is allowed (EINVAL otherwise).
            let r = unsafe { libc::clock_gettime(black_box(c.as_raw()), ts.as_mut_ptr()) };
            // SAFETY: 0 means the call wrote `ts`.
            fields(r, || unsafe {
                (ts.assume_init_ref().tv_sec, ts.assume_init_ref().tv_nsec)
            });
        }),
        Function::ClockGetres(c) => Probe::new(move || {
            let mut ts = MaybeUninit::<libc::timespec>::uninit();
            // SAFETY: as above.
            let r = unsafe { libc::clock_getres(black_box(c.as_raw()), ts.as_mut_ptr()) };
            // SAFETY: 0 means the call wrote `ts`.
            fields(r, || unsafe {
                (ts.assume_init_ref().tv_sec, ts.assume_init_ref().tv_nsec)
            });
        }),
        Function::Gettimeofday => Probe::new(|| {
            let mut tv = MaybeUninit::<libc::timeval>::uninit();
            // SAFETY: `tv` is writable; NULL timezone is allowed.
            let r = unsafe { libc::gettimeofday(tv.as_mut_ptr(), ptr::null_mut()) };
            // SAFETY: 0 means the call wrote `tv`.
            fields(r, || unsafe {
                (tv.assume_init_ref().tv_sec, tv.assume_init_ref().tv_usec)
            });
        }),
        Function::Time => Probe::new(|| {
            // SAFETY: NULL is allowed.
            black_box(unsafe { libc::time(black_box(ptr::null_mut())) });
        }),
        Function::Getcpu => Probe::new(|| {
            // SAFETY: no arguments, no preconditions.
            black_box(unsafe { libc::sched_getcpu() });
        }),
        Function::Getrandom => getrandom::probe(getrandom::Path::Libc, 16),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_probe_runs() {
        for f in full_rows() {
            for imp in Impl::ALL {
                if let Some(p) = probe(f, imp) {
                    let t = p.trial(50, 1);
                    assert!(t.ns > 0.0 && t.ns.is_finite(), "{f:?} {imp:?}");
                }
            }
        }
    }

    #[test]
    fn peer_crates_where_they_offer_the_call() {
        let has = |f, imp| probe(f, imp).is_some();
        let mono = Function::ClockGettime(ClockId::MONOTONIC);
        assert!(has(mono, Impl::Rustix) && has(mono, Impl::Std));
        assert!(has(Function::ClockGettime(ClockId::REALTIME), Impl::Std));
        assert!(!has(Function::ClockGettime(ClockId::TAI), Impl::Std));
        // rustix has no way to pass an unnamed id, nor a gettimeofday or time.
        assert!(!has(
            Function::ClockGettime(names::UNSUPPORTED),
            Impl::Rustix
        ));
        assert!(!has(Function::Gettimeofday, Impl::Rustix));
        assert!(has(Function::Getcpu, Impl::Rustix));
    }
}
