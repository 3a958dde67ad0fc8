//! The first call in a fresh process finds the auxiliary vector, parses the image and
//! binds every entry point: it must not allocate (it may run in a signal handler or
//! before an allocator exists). A counting global allocator proves it.

mod support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    /// Allocations made by this thread: the test harness's own threads may allocate
    /// at any moment (slowly, under QEMU), and they are not the library.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: the slot may be gone while a thread is exiting.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

// SAFETY: defers every operation to the system allocator, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs in a child process so this really is the first use of the library there.
#[test]
fn first_call_and_every_entry_allocate_nothing() {
    if std::env::var_os("VDSOTIME_FIRST_CALL_CHILD").is_some() {
        let before = allocations();
        let t = vdsotime::clock_gettime(vdsotime::ClockId::MONOTONIC);
        let res = vdsotime::clock_getres(vdsotime::ClockId::REALTIME);
        let tv = vdsotime::gettimeofday();
        let secs = vdsotime::time();
        let cpu = vdsotime::getcpu();
        let path = vdsotime::path(vdsotime::Function::Time);
        let vdso = vdsotime::vdso().map(|v| v.symbols().count());
        let _ = vdsotime::syscall::clock_gettime(vdsotime::ClockId::PROCESS_CPUTIME_ID);
        let after = allocations();
        assert!(t.is_ok() && res.is_ok() && tv.is_ok() && secs > 0 && cpu.is_ok());
        assert_eq!(after - before, 0, "the library allocated");
        println!("first call ok: no allocation ({path}, {vdso:?} symbols)");
        return;
    }
    let out = support::child::rerun(
        "first_call_and_every_entry_allocate_nothing",
        ("VDSOTIME_FIRST_CALL_CHILD", "1"),
        &[],
    );
    support::child::assert_ran(&out, "first call ok");
}

/// What a process sees once its first call is made: every function's path and whether
/// `raw` hands out each symbol, one line (the same in every process of this binary).
fn report() -> String {
    use vdsotime::{raw, ClockId, Function};
    let paths = [
        Function::ClockGettime(ClockId::MONOTONIC),
        Function::ClockGettime(ClockId::REALTIME_COARSE),
        Function::ClockGetres(ClockId::MONOTONIC),
        Function::Gettimeofday,
        Function::Time,
        Function::Getcpu,
    ]
    .map(|f| vdsotime::path(f).to_string());
    let raw = [
        raw::clock_gettime().is_some(),
        raw::clock_getres().is_some(),
        raw::gettimeofday().is_some(),
        raw::time().is_some(),
        raw::getcpu().is_some(),
    ];
    format!("{paths:?} {raw:?}")
}

/// Makes `first` the process's first call into the library.
fn call_first(first: &str) {
    use vdsotime::{ClockId, Function};
    let now = || vdsotime::syscall::clock_gettime(ClockId::REALTIME).unwrap();
    match first {
        "clock_gettime" => {
            let before = vdsotime::syscall::clock_gettime(ClockId::MONOTONIC).unwrap();
            let t = vdsotime::clock_gettime(ClockId::MONOTONIC).unwrap();
            assert!(before <= t);
        }
        "clock_getres" => assert_eq!(
            vdsotime::clock_getres(ClockId::MONOTONIC),
            vdsotime::syscall::clock_getres(ClockId::MONOTONIC)
        ),
        "gettimeofday" => {
            let before = now().tv_sec;
            let tv = vdsotime::gettimeofday().unwrap();
            assert!(before <= tv.tv_sec && tv.tv_sec <= now().tv_sec);
        }
        "time" => {
            let before = now().tv_sec;
            let t = vdsotime::time();
            assert!(before - 1 <= t && t <= now().tv_sec, "{before} {t}");
        }
        "getcpu" => assert!(vdsotime::getcpu().unwrap().0 < 65536),
        "path" => drop(vdsotime::path(Function::Gettimeofday)),
        "raw" => drop(vdsotime::raw::clock_getres()),
        "time_entry" => {
            #[cfg(target_pointer_width = "64")]
            // SAFETY: a null pointer asks for the return value only.
            let t = unsafe { vdsotime::raw::time_entry()(core::ptr::null_mut()) };
            #[cfg(target_pointer_width = "32")]
            let t = vdsotime::time();
            assert!(t > 1_600_000_000);
        }
        "init" => vdsotime::init(),
        other => panic!("unknown first call {other}"),
    }
}

/// Each function binds its own entry on its first call: whichever a fresh process calls
/// first answers as the system call does, and afterwards every function's path and
/// every `raw` symbol are what they are in a process that used them all (this one).
#[test]
fn every_function_may_be_the_first() {
    if let Some(first) = std::env::var_os("VDSOTIME_FIRST_FUNCTION") {
        let first = first.into_string().unwrap();
        let before = allocations();
        call_first(&first);
        assert_eq!(allocations() - before, 0, "{first} allocated");
        println!("after {first}: {}", report());
        return;
    }
    let _ = vdsotime::clock_gettime(vdsotime::ClockId::MONOTONIC);
    let expected = report();
    for first in [
        "clock_gettime",
        "clock_getres",
        "gettimeofday",
        "time",
        "getcpu",
        "path",
        "raw",
        "time_entry",
        "init",
    ] {
        let out = support::child::rerun(
            "every_function_may_be_the_first",
            ("VDSOTIME_FIRST_FUNCTION", first),
            &[],
        );
        support::child::assert_ran(&out, &format!("after {first}: {expected}"));
    }
}
