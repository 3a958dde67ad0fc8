//! Whether the process has a vDSO must match its aux vector. Under valgrind, which hides
//! the vDSO (AT_SYSINFO_EHDR is 0) and is run with VDSOTIME_EXPECT_NO_VDSO=1 by
//! scripts/reliability/valgrind.sh, every function must take the syscall path and still
//! give syscall-bracketed results.

mod reliability_common;

use std::time::Duration;

use reliability_common::{bracket, bracket_time, child_mode, expect_no_vdso, run_child};
use vdsotime::{ClockId, Function, Path};

fn functions() -> Vec<Function> {
    let mut f: Vec<Function> = ClockId::ALL
        .iter()
        .map(|&c| Function::ClockGettime(c))
        .collect();
    f.extend(ClockId::ALL.iter().map(|&c| Function::ClockGetres(c)));
    f.extend([
        Function::Gettimeofday,
        Function::Time,
        Function::Getcpu,
        Function::Getrandom,
    ]);
    f
}

#[test]
fn vdso_presence_matches_the_aux_vector() {
    // SAFETY: getauxval only reads the process's aux vector.
    let at = unsafe { libc::getauxval(libc::AT_SYSINFO_EHDR) } as usize;
    if expect_no_vdso() {
        assert_eq!(
            at, 0,
            "VDSOTIME_EXPECT_NO_VDSO=1 but AT_SYSINFO_EHDR is {at:#x}"
        );
        assert!(
            vdsotime::vdso().is_none(),
            "a vDSO was found where there is none"
        );
        assert_eq!(vdsotime::auxv::sysinfo_ehdr(), None);
        for f in functions() {
            let p = vdsotime::path(f);
            assert!(matches!(p, Path::Syscall), "{f:?} takes {p} without a vDSO");
        }
        assert!(vdsotime::raw::clock_gettime().is_none());
        println!("no vDSO: every function takes the syscall path");
    } else {
        let v = vdsotime::vdso();
        assert_eq!(
            v.is_some(),
            at != 0,
            "vdso() {:?} but AT_SYSINFO_EHDR {at:#x}",
            v.map(|v| v.base())
        );
        if let Some(v) = v {
            assert_eq!(v.base(), at);
            assert_eq!(vdsotime::auxv::sysinfo_ehdr(), Some(at));
            let p = vdsotime::path(Function::ClockGettime(ClockId::MONOTONIC));
            assert!(
                matches!(p, Path::Vdso { .. }),
                "MONOTONIC takes {p} with a vDSO"
            );
        }
    }
}

#[test]
fn every_clock_is_bracketed_by_syscalls() {
    for clock in ClockId::ALL
        .iter()
        .copied()
        .chain([ClockId::from_raw(-1), ClockId::from_raw(12)])
    {
        for _ in 0..50 {
            bracket(clock).unwrap();
        }
        assert_eq!(
            vdsotime::clock_getres(clock),
            vdsotime::syscall::clock_getres(clock),
            "{clock:?}"
        );
    }
    bracket_time().unwrap();
    let b = vdsotime::syscall::gettimeofday().unwrap();
    let v = vdsotime::gettimeofday().unwrap();
    let a = vdsotime::syscall::gettimeofday().unwrap();
    assert!(b <= v && v <= a, "gettimeofday {v:?} not in [{b:?}, {a:?}]");
    assert_eq!(
        vdsotime::gettimeofday_tz().unwrap().1,
        vdsotime::syscall::gettimeofday_tz().unwrap().1
    );
    let (cpu, _) = vdsotime::getcpu().unwrap();
    assert!((cpu as usize) < 4096);
}

/// The raw getters are the first library call of a fresh process (a benchmark's first
/// line): they must already see the vDSO that `vdso()` reports, for every entry point.
#[test]
fn raw_getters_work_as_the_first_call() {
    const TEST: &str = "raw_getters_work_as_the_first_call";
    if child_mode().as_deref() == Some("rawfirst") {
        let got = [
            ("clock_gettime", vdsotime::raw::clock_gettime().is_some()),
            ("clock_getres", vdsotime::raw::clock_getres().is_some()),
            ("gettimeofday", vdsotime::raw::gettimeofday().is_some()),
            ("time", vdsotime::raw::time().is_some()),
            ("getcpu", vdsotime::raw::getcpu().is_some()),
        ];
        // Asked again after the library has certainly set itself up.
        let _ = vdsotime::clock_gettime(ClockId::MONOTONIC);
        let again = [
            vdsotime::raw::clock_gettime().is_some(),
            vdsotime::raw::clock_getres().is_some(),
            vdsotime::raw::gettimeofday().is_some(),
            vdsotime::raw::time().is_some(),
            vdsotime::raw::getcpu().is_some(),
        ];
        for ((name, first), later) in got.iter().zip(again) {
            println!("raw::{name}: first call {first}, later {later}");
            assert_eq!(
                *first, later,
                "raw::{name}() changes its answer after set-up"
            );
        }
        // powerpc's vDSO needs an asm call sequence, so `raw` never hands out its symbols.
        if vdsotime::vdso().is_some() && !cfg!(target_arch = "powerpc64") {
            assert!(
                got[0].1,
                "vDSO present but raw::clock_gettime() was None on first use"
            );
        }
        println!("RAWFIRST_OK");
        return;
    }
    let run = run_child(TEST, "rawfirst", &[], Duration::from_secs(60));
    assert!(run.status.success(), "{run:#?}");
    assert_eq!(run.values("RAWFIRST_OK").len(), 1, "{run:#?}");
}
