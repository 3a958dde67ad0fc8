//! The cost of the first call in a fresh process: finding the auxiliary vector,
//! sizing and parsing the vDSO image and binding every entry point. Measured by
//! spawning this binary again (`vdsotime first-call-probe`, hidden) so the library
//! really starts cold, and counting heap allocations with a global allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use serde::{Deserialize, Serialize};
use vdsotime::{syscall, ClockId};

/// Counts every allocation the process makes.
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every operation is the system allocator's; only a counter is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// What `bench` reports for the first call.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FirstCall {
    /// Fresh processes measured.
    pub runs: usize,
    /// Fastest first call, ns (the syscall pair around it subtracted).
    pub min_ns: f64,
    /// Median first call, ns.
    pub median_ns: f64,
    /// Most heap allocations any first call made (the library promises 0).
    pub allocations: usize,
}

fn ns(t: vdsotime::Timespec) -> i128 {
    t.as_nanos()
}

/// Runs in the fresh child: times the first `clock_gettime` between two syscall
/// readings, subtracts the cost of a bare syscall pair, prints `ns allocations`.
pub fn probe() -> Result<i32, String> {
    let mono = || syscall::clock_gettime(ClockId::MONOTONIC).map(ns);
    let allocs = ALLOCATIONS.load(Relaxed);
    let t0 = mono().map_err(|e| e.to_string())?;
    let first = std::hint::black_box(vdsotime::clock_gettime(std::hint::black_box(
        ClockId::MONOTONIC,
    )));
    let t1 = mono().map_err(|e| e.to_string())?;
    let allocations = ALLOCATIONS.load(Relaxed) - allocs;
    first.map_err(|e| format!("first call failed: {e}"))?;
    // The gap between two back-to-back syscall readings is what t1 - t0 holds besides the call.
    let gap = (0..5)
        .filter_map(|_| Some(mono().ok()?.abs_diff(mono().ok()?)))
        .min()
        .unwrap_or(0) as i128;
    println!("{} {allocations}", (t1 - t0 - gap).max(0));
    Ok(0)
}

/// Spawns `runs` fresh processes and summarizes their first calls.
pub fn measure(runs: usize) -> Result<FirstCall, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut samples = Vec::with_capacity(runs);
    let mut allocations = 0;
    for _ in 0..runs {
        let out = Command::new(&exe)
            .arg("first-call-probe")
            .output()
            .map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&out.stdout);
        let mut fields = text.split_whitespace().map(str::parse::<u64>);
        match (out.status.success(), fields.next(), fields.next()) {
            (true, Some(Ok(ns)), Some(Ok(a))) => {
                samples.push(ns as f64);
                allocations = allocations.max(a as usize);
            }
            _ => {
                return Err(format!(
                    "first-call probe failed: {text}{}",
                    String::from_utf8_lossy(&out.stderr)
                ))
            }
        }
    }
    samples.sort_by(f64::total_cmp);
    let pick = |i: usize| samples.get(i).copied().unwrap_or(f64::NAN);
    Ok(FirstCall {
        runs,
        min_ns: pick(0),
        median_ns: pick(samples.len() / 2),
        allocations,
    })
}
