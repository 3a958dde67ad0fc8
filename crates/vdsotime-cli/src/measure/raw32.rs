//! The vdso-raw reference for the rows whose only vDSO symbol on a 32-bit target is a
//! time32 one: `clock_getres` (until a kernel exports `__vdso_clock_getres_time64`),
//! `gettimeofday` and `time` on i386. `vdsotime::raw` hands none of them out: their
//! results overflow in 2038, so the library calls them only through shims that check for
//! that (and reads `time` from the time64 coarse clock instead). A benchmark still wants
//! the bare symbol as the floor its ratios are taken against, so it is found here by the
//! architecture table's name and version, and called with the time32 types, the result
//! consumed as the two 32-bit fields it is.

use std::ffi::c_void;
use std::hint::black_box;
use std::mem::MaybeUninit;
use std::ptr;

use vdsotime::arch::ArchTable;
use vdsotime::Function;

use crate::measure::Probe;

/// A time32 `struct timespec` or `struct timeval`: two 32-bit `long`s.
type Pair = [i32; 2];
/// `int clock_getres(clockid_t, struct old_timespec32 *)`.
type GetresFn = unsafe extern "C" fn(i32, *mut Pair) -> i32;
/// `int gettimeofday(struct old_timeval32 *, struct timezone *)`.
type GettimeofdayFn = unsafe extern "C" fn(*mut Pair, *mut c_void) -> i32;
/// `old_time32_t time(old_time32_t *)`.
type TimeFn = unsafe extern "C" fn(*mut i32) -> i32;

/// The address of this process's vDSO symbol that `name` picks from its table, where it
/// can be called with its C signature (not through powerpc's call shim).
fn symbol(name: fn(&ArchTable) -> Option<&'static str>) -> Option<usize> {
    let vdso = vdsotime::vdso()?;
    let arch = vdso.arch()?;
    if !vdso.is_native() || arch.needs_call_shim {
        return None;
    }
    Some(vdso.lookup(name(arch)?, Some(arch.version))?.address)
}

/// Consumes a C result and, when it is 0, the pair it wrote.
#[inline(always)]
fn consume(ret: i32, out: &MaybeUninit<Pair>) {
    if black_box(ret) == 0 {
        // SAFETY: 0 means the call wrote the pair.
        let [a, b] = unsafe { out.assume_init() };
        black_box(a);
        black_box(b);
    }
}

/// The bare time32 symbol for `f`, or `None` where `f` has none (or a time64 one, which
/// `vdsotime::raw` gives).
pub fn probe(f: Function) -> Option<Probe> {
    Some(match f {
        Function::ClockGetres(c) => {
            // SAFETY: the vDSO's time32 clock_getres has exactly this C signature.
            let p = unsafe { std::mem::transmute::<usize, GetresFn>(symbol(|a| a.clock_getres)?) };
            Probe::new(move || {
                let mut ts = MaybeUninit::<Pair>::uninit();
                // SAFETY: `ts` is writable for a time32 timespec; any clock id is allowed.
                let r = unsafe { p(black_box(c.as_raw()), ts.as_mut_ptr()) };
                consume(r, &ts);
            })
        }
        Function::Gettimeofday => {
            // SAFETY: the vDSO's gettimeofday on a 32-bit target has this C signature.
            let p = unsafe {
                std::mem::transmute::<usize, GettimeofdayFn>(symbol(|a| a.gettimeofday)?)
            };
            Probe::new(move || {
                let mut tv = MaybeUninit::<Pair>::uninit();
                // SAFETY: `tv` is writable for a time32 timeval; a NULL timezone is allowed.
                let r = unsafe { p(tv.as_mut_ptr(), ptr::null_mut()) };
                consume(r, &tv);
            })
        }
        Function::Time => {
            // SAFETY: the vDSO's time on a 32-bit target has this C signature.
            let p = unsafe { std::mem::transmute::<usize, TimeFn>(symbol(|a| a.time)?) };
            Probe::new(move || {
                // SAFETY: NULL means "return the value only".
                black_box(unsafe { p(black_box(ptr::null_mut())) });
            })
        }
        Function::ClockGettime(_) | Function::Getcpu | Function::Getrandom => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use vdsotime::ClockId;

    /// Each time32 symbol found answers as the kernel does: `time` within the coarse
    /// clock's second, `clock_getres` with the library's resolution.
    #[test]
    fn the_time32_symbols_answer_as_the_library() {
        let Some(getres) = symbol(|a| a.clock_getres) else {
            return crate::skip::skip(
                "the_time32_symbols_answer_as_the_library",
                "vdso",
                "this process's vDSO has no time32 clock_getres",
            );
        };
        // SAFETY: as in `probe`.
        let getres = unsafe { std::mem::transmute::<usize, GetresFn>(getres) };
        let mut ts = [0i32; 2];
        // SAFETY: `ts` is a writable time32 timespec.
        assert_eq!(unsafe { getres(ClockId::MONOTONIC.as_raw(), &mut ts) }, 0);
        let lib = vdsotime::clock_getres(ClockId::MONOTONIC).unwrap();
        assert_eq!(
            (i64::from(ts[0]), i64::from(ts[1])),
            (lib.tv_sec, lib.tv_nsec)
        );
        if let Some(time) = symbol(|a| a.time) {
            // SAFETY: as in `probe`.
            let time = unsafe { std::mem::transmute::<usize, TimeFn>(time) };
            let before = vdsotime::clock_gettime(ClockId::REALTIME_COARSE)
                .unwrap()
                .tv_sec;
            // SAFETY: NULL is allowed.
            let t = i64::from(unsafe { time(ptr::null_mut()) });
            let after = vdsotime::clock_gettime(ClockId::REALTIME_COARSE)
                .unwrap()
                .tv_sec;
            assert!(before <= t && t <= after, "{before} <= {t} <= {after}");
        }
        for f in [
            Function::ClockGetres(ClockId::MONOTONIC),
            Function::Gettimeofday,
        ] {
            assert!(probe(f).is_some(), "{f:?}");
        }
    }
}
