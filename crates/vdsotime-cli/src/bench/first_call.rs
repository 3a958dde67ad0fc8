//! The first call in a fresh process, side by side: vdsotime against what programs use
//! today, each paying whatever its library does lazily (vdsotime and rustix find and parse
//! the vDSO; glibc did that at start-up). Each measurement is a fresh run of this binary
//! (`vdsotime first-call-probe PATH`, hidden) that makes one call, bracketed by two raw
//! `clock_gettime` system calls whose own gap is subtracted. Rounds alternate the paths in
//! rotated order, as `measure::interleave` does for the steady state, and a global
//! allocator counts the heap allocations of the call itself.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use crate::first_calls::{FirstCalls, FirstPath, PathFirstCall};
use crate::measure::interleave::{quartiles, rotation};

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

/// What the clock table does not show: printed under it.
pub const CLOCK_NOTE: &str = "The probe is this tool, whose start-up has already read the clock once through glibc (a constructor of the minstant crate, one of bench's peers): the vDSO's own pages are mapped for every path, and the figures are what each library adds. A program's very first reading also maps them (a page fault or two), whichever library makes it.";

/// `CLOCK_MONOTONIC` by the system call, through glibc's `syscall` (warm in every
/// path, and none of the libraries compared).
fn raw_now() -> Result<i128, String> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a writable `struct timespec` of this target's C ABI.
    let ret = unsafe { libc::syscall(libc::SYS_clock_gettime, libc::CLOCK_MONOTONIC, &mut ts) };
    if ret != 0 {
        return Err(format!(
            "clock_gettime system call failed: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec))
}

/// Page faults (minor and major) this process has taken so far.
fn page_faults() -> Result<libc::c_long, String> {
    // SAFETY: an all-zero `rusage` is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is writable.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return Err(format!("getrusage: {}", std::io::Error::last_os_error()));
    }
    Ok(usage.ru_minflt + usage.ru_majflt)
}

/// Makes `path`'s first call; `Err` if it failed.
#[inline(never)]
fn first(path: FirstPath) -> Result<(), String> {
    let mut buf = [0u8; 16];
    let ok = match path {
        FirstPath::Init => {
            vdsotime::init();
            true
        }
        FirstPath::Vdsotime | FirstPath::VdsotimeAfterInit => black_box(vdsotime::clock_gettime(
            black_box(vdsotime::ClockId::MONOTONIC),
        ))
        .is_ok(),
        FirstPath::Rustix => {
            black_box(rustix::time::clock_gettime(black_box(
                rustix::time::ClockId::Monotonic,
            )));
            true
        }
        FirstPath::Glibc => {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: `ts` is writable.
            let ret = unsafe { libc::clock_gettime(black_box(libc::CLOCK_MONOTONIC), &mut ts) };
            black_box(ts);
            ret == 0
        }
        FirstPath::Std => {
            black_box(std::time::Instant::now());
            true
        }
        FirstPath::GetrandomVdsotime => {
            vdsotime::getrandom(black_box(&mut buf), vdsotime::GrndFlags::NONE) == Ok(16)
        }
        // SAFETY: `buf` has room for 16 bytes.
        FirstPath::GetrandomGlibc => unsafe {
            libc::getrandom(buf.as_mut_ptr().cast(), 16, 0) == 16
        },
        FirstPath::GetrandomSyscall => {
            // SAFETY: `buf` has room for 16 bytes.
            let n = unsafe { libc::syscall(libc::SYS_getrandom, buf.as_mut_ptr(), 16usize, 0) };
            n == 16
        }
    };
    black_box(buf);
    if ok {
        Ok(())
    } else {
        Err(format!("the first call through {} failed", path.name()))
    }
}

/// Runs in the fresh child: times `path`'s first call between two raw syscall readings,
/// subtracts the least gap of a bare pair (measured first, which also warms the pair),
/// prints `ns allocations page-faults`.
pub fn probe(path: FirstPath) -> Result<i32, String> {
    let mut gap = i128::MAX;
    for _ in 0..5 {
        let a = raw_now()?;
        gap = gap.min(raw_now()? - a);
    }
    if path == FirstPath::VdsotimeAfterInit {
        vdsotime::init();
    }
    let faults = page_faults()?;
    let allocs = ALLOCATIONS.load(Relaxed);
    let t0 = raw_now()?;
    let called = first(path);
    let t1 = raw_now()?;
    let allocations = ALLOCATIONS.load(Relaxed) - allocs;
    let faults = page_faults()? - faults;
    called?;
    println!("{} {allocations} {faults}", (t1 - t0 - gap).max(0));
    Ok(0)
}

/// What one probe process measured.
struct Run {
    ns: f64,
    allocations: usize,
    page_faults: f64,
}

/// Runs one probe process for `path`.
fn spawn(exe: &std::path::Path, path: FirstPath) -> Result<Run, String> {
    let out = Command::new(exe)
        .args(["first-call-probe", path.name()])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut fields = text.split_whitespace().map(str::parse::<u64>);
    match (
        out.status.success(),
        fields.next(),
        fields.next(),
        fields.next(),
    ) {
        (true, Some(Ok(ns)), Some(Ok(a)), Some(Ok(f))) => Ok(Run {
            ns: ns as f64,
            allocations: a as usize,
            page_faults: f as f64,
        }),
        _ => Err(format!(
            "first-call probe {} failed: {text}{}",
            path.name(),
            String::from_utf8_lossy(&out.stderr)
        )),
    }
}

/// Runs `rounds` rounds over `paths` (each round one fresh process per path, in rotated
/// order) and summarizes each path, its ratios taken against `reference`.
pub fn measure(
    paths: &[FirstPath],
    reference: FirstPath,
    rounds: usize,
) -> Result<FirstCalls, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let n = paths.len();
    let mut ns = vec![Vec::with_capacity(rounds); n];
    let mut faults = vec![Vec::with_capacity(rounds); n];
    let mut allocations = vec![0; n];
    for r in 0..rounds {
        for i in rotation(n, r) {
            let run = spawn(&exe, paths[i])?;
            ns[i].push(run.ns);
            faults[i].push(run.page_faults);
            allocations[i] = allocations[i].max(run.allocations);
        }
    }
    let reference_ns = paths
        .iter()
        .position(|&p| p == reference)
        .map(|i| ns[i].clone());
    let summaries = paths
        .iter()
        .zip(&ns)
        .zip(allocations)
        .zip(&faults)
        .map(|(((&path, samples), allocations), faults)| {
            let ratios: Vec<f64> = reference_ns.as_ref().map_or(Vec::new(), |base| {
                samples
                    .iter()
                    .zip(base)
                    .map(|(&x, &b)| x / b.max(1.0))
                    .collect()
            });
            let (median, _, _) = quartiles(samples);
            let (ratio, q1, q3) = quartiles(&ratios);
            PathFirstCall {
                path: path.name().to_string(),
                call: path.call().to_string(),
                runs: samples.len(),
                min_ns: samples.iter().copied().fold(f64::INFINITY, f64::min),
                median_ns: median,
                ratio_to_reference: ratio,
                ratio_q1: q1,
                ratio_q3: q3,
                allocations,
                median_page_faults: quartiles(faults).0,
            }
        })
        .collect();
    Ok(FirstCalls {
        rounds,
        reference: reference.name().to_string(),
        paths: summaries,
    })
}
