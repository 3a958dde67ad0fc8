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
