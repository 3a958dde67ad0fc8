//! How each entry is served: from the vDSO image (if any) and the native architecture
//! table, one entry at a time, so that a first call looks up its own symbol only.

use super::{shim, ClockFn, CpuFn, TimeFn, TodFn};
use crate::arch::{self, ArchTable};
use crate::elf::NativeImage;
use crate::syscall::{raw_clock_getres, raw_clock_gettime, raw_getcpu, raw_gettimeofday, raw_time};
use crate::Path;

/// How one entry is served.
pub(crate) struct Binding<F> {
    /// What the entry's atomic will hold.
    pub(crate) call: F,
    /// The vDSO symbol's address, 0 when none is used.
    pub(crate) symbol: usize,
    /// The path, for [`crate::path`].
    pub(crate) path: Path,
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

/// `name` (if this architecture has it) in `v`, with the table's version.
fn find(v: Option<&NativeImage<'static>>, name: Option<&'static str>) -> Option<Found> {
    let t: &ArchTable = arch::NATIVE;
    let name = name?;
    let (address, versioned) = v?.lookup(name, t.version)?;
    Some(Found {
        name,
        version: versioned.then_some(t.version),
        address,
    })
}

/// The time64 clock symbol, unless this arch requires its time32 twin beside it.
fn time64(
    v: Option<&NativeImage<'static>>,
    name64: Option<&'static str>,
    name32: Option<&'static str>,
) -> Option<Found> {
    let found = find(v, name64)?;
    if arch::NATIVE.time64_needs_time32 && find(v, name32).is_none() {
        return None;
    }
    Some(found)
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

/// `clock_gettime`: the time64 symbol, else (on 32-bit targets, widened) the time32 one.
#[inline]
pub(crate) fn clock_gettime(v: Option<&NativeImage<'static>>) -> Binding<ClockFn> {
    let t = arch::NATIVE;
    if let Some(f) = time64(v, t.clock_gettime64, t.clock_gettime) {
        return direct!(f, ClockFn, shim::clock_gettime, shim::clock_gettime_enosys);
    }
    match find(v, t.clock_gettime) {
        #[cfg(target_pointer_width = "64")]
        Some(f) => direct!(f, ClockFn, shim::clock_gettime, shim::clock_gettime_enosys),
        #[cfg(target_pointer_width = "32")]
        Some(f) => f.bind(shim::clock_gettime_time32 as ClockFn),
        None => syscall(raw_clock_gettime as ClockFn),
    }
}

/// `clock_getres`, chosen as `clock_gettime` is.
#[inline]
pub(crate) fn clock_getres(v: Option<&NativeImage<'static>>) -> Binding<ClockFn> {
    let t = arch::NATIVE;
    if let Some(f) = time64(v, t.clock_getres64, t.clock_getres) {
        return direct!(f, ClockFn, shim::clock_getres, shim::clock_getres_enosys);
    }
    match find(v, t.clock_getres) {
        #[cfg(target_pointer_width = "64")]
        Some(f) => direct!(f, ClockFn, shim::clock_getres, shim::clock_getres_enosys),
        #[cfg(target_pointer_width = "32")]
        Some(f) => f.bind(shim::clock_getres_time32 as ClockFn),
        None => syscall(raw_clock_getres as ClockFn),
    }
}

/// `gettimeofday` (widened from time32 on 32-bit targets).
#[inline]
pub(crate) fn gettimeofday(v: Option<&NativeImage<'static>>) -> Binding<TodFn> {
    match find(v, arch::NATIVE.gettimeofday) {
        #[cfg(target_pointer_width = "64")]
        Some(f) => direct!(f, TodFn, shim::gettimeofday, shim::gettimeofday_enosys),
        #[cfg(target_pointer_width = "32")]
        Some(f) => f.bind(shim::gettimeofday_time32 as TodFn),
        None => syscall(raw_gettimeofday as TodFn),
    }
}

/// `time` is the coarse wall clock's seconds: where the vDSO has no 64-bit `time`,
/// its coarse clock answers in a few ns (through the `clock_gettime` entry), far faster
/// than the syscall.
#[inline]
pub(crate) fn time(v: Option<&NativeImage<'static>>) -> Binding<TimeFn> {
    let own = if cfg!(target_pointer_width = "64") {
        find(v, arch::NATIVE.time)
    } else {
        None
    };
    if let Some(f) = own {
        return direct!(f, TimeFn, shim::time);
    }
    match clock_gettime(v).path {
        Path::Vdso { symbol, version } => Binding {
            call: shim::time_from_coarse as TimeFn,
            symbol: 0,
            path: Path::VdsoCoarse { symbol, version },
        },
        _ => syscall(raw_time as TimeFn),
    }
}

/// `getcpu` (the caller reads glibc's rseq area first, where there is one).
#[inline]
pub(crate) fn getcpu(v: Option<&NativeImage<'static>>) -> Binding<CpuFn> {
    match find(v, arch::NATIVE.getcpu) {
        Some(f) => direct!(f, CpuFn, shim::getcpu),
        None => syscall(raw_getcpu as CpuFn),
    }
}
