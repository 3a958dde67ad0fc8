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

use serde::{Deserialize, Serialize};

use crate::measure::interleave::{quartiles, rotation};
use crate::output;

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

/// One way to make a first call: what a fresh probe process runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FirstPath {
    /// `vdsotime::clock_gettime(ClockId::MONOTONIC)`.
    Vdsotime,
    /// `vdsotime::init()` itself: the eager set-up a program may make at start-up.
    Init,
    /// `vdsotime::init()` made before the bracket, then the first clock reading.
    VdsotimeAfterInit,
    /// `rustix::time::clock_gettime(ClockId::Monotonic)`.
    Rustix,
    /// glibc's `clock_gettime(CLOCK_MONOTONIC)`, through the libc crate.
    Glibc,
    /// `std::time::Instant::now()`.
    Std,
    /// `vdsotime::getrandom` of 16 bytes: the per-thread state on the first call.
    GetrandomVdsotime,
    /// glibc's `getrandom` of 16 bytes.
    GetrandomGlibc,
    /// The `getrandom` system call for 16 bytes, through `libc::syscall`.
    GetrandomSyscall,
}

impl FirstPath {
    /// The clock paths `bench` compares, in table order.
    pub const CLOCK: [FirstPath; 6] = [
        FirstPath::Vdsotime,
        FirstPath::Init,
        FirstPath::VdsotimeAfterInit,
        FirstPath::Rustix,
        FirstPath::Glibc,
        FirstPath::Std,
    ];
    /// The getrandom paths `bench-getrandom` compares, in table order.
    pub const GETRANDOM: [FirstPath; 3] = [
        FirstPath::GetrandomVdsotime,
        FirstPath::GetrandomGlibc,
        FirstPath::GetrandomSyscall,
    ];

    /// The name on the probe's command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            FirstPath::Vdsotime => "vdsotime",
            FirstPath::Init => "init",
            FirstPath::VdsotimeAfterInit => "vdsotime-after-init",
            FirstPath::Rustix => "rustix",
            FirstPath::Glibc => "glibc",
            FirstPath::Std => "std",
            FirstPath::GetrandomVdsotime => "getrandom-vdsotime",
            FirstPath::GetrandomGlibc => "getrandom-glibc",
            FirstPath::GetrandomSyscall => "getrandom-syscall",
        }
    }

    /// The code that is timed, for the table and JSON.
    pub fn call(self) -> &'static str {
        match self {
            FirstPath::Vdsotime => "vdsotime::clock_gettime(ClockId::MONOTONIC)",
            FirstPath::Init => "vdsotime::init()",
            FirstPath::VdsotimeAfterInit => {
                "vdsotime::clock_gettime(ClockId::MONOTONIC) after vdsotime::init()"
            }
            FirstPath::Rustix => "rustix::time::clock_gettime(ClockId::Monotonic)",
            FirstPath::Glibc => "libc::clock_gettime(CLOCK_MONOTONIC) (glibc)",
            FirstPath::Std => "std::time::Instant::now()",
            FirstPath::GetrandomVdsotime => "vdsotime::getrandom(&mut [0u8; 16])",
            FirstPath::GetrandomGlibc => "libc::getrandom(buf, 16, 0) (glibc)",
            FirstPath::GetrandomSyscall => "libc::syscall(SYS_getrandom, buf, 16, 0)",
        }
    }
}

/// What the clock table does not show: printed under it.
pub const CLOCK_NOTE: &str = "The probe is this tool, whose start-up has already read the clock once through glibc (a constructor of the minstant crate, one of bench's peers): the vDSO's own pages are mapped for every path, and the figures are what each library adds. A program's very first reading also maps them (a page fault or two), whichever library makes it.";

/// The vdsotime clock path alone, as `bench --json` has always reported it.
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

/// One path's first calls over every round.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PathFirstCall {
    /// The path's name (`vdsotime`, `rustix`, `glibc`, `std`, ...).
    pub path: String,
    /// The code timed.
    pub call: String,
    /// Fresh processes measured (one per round).
    pub runs: usize,
    /// Fastest first call, ns.
    pub min_ns: f64,
    /// Median first call, ns.
    pub median_ns: f64,
    /// Median over rounds of this path's call over the reference's in the same round.
    pub ratio_to_reference: f64,
    /// First quartile of that ratio.
    pub ratio_q1: f64,
    /// Third quartile of that ratio.
    pub ratio_q3: f64,
    /// Most heap allocations any of its first calls made.
    pub allocations: usize,
    /// Median of the page faults (minor and major) the process took during the call.
    pub median_page_faults: f64,
}

/// Every path's first calls, measured in alternating fresh processes.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FirstCalls {
    /// Rounds: each ran every path once, in rotated order, each in a fresh process.
    pub rounds: usize,
    /// The path the ratios are taken against.
    pub reference: String,
    /// One entry per path, in table order.
    pub paths: Vec<PathFirstCall>,
}

impl FirstCalls {
    /// The entry of `path`, if measured.
    pub fn get(&self, path: FirstPath) -> Option<&PathFirstCall> {
        self.paths.iter().find(|p| p.path == path.name())
    }

    /// The vdsotime clock path in the shape of the older `first_call` field.
    pub fn vdsotime(&self) -> Option<FirstCall> {
        self.get(FirstPath::Vdsotime).map(|p| FirstCall {
            runs: p.runs,
            min_ns: p.min_ns,
            median_ns: p.median_ns,
            allocations: p.allocations,
        })
    }

    /// Prints the side-by-side table under `title`.
    pub fn print(&self, title: &str) {
        println!(
            "{title}: {} rounds, each one fresh process per path in rotated order; ns between two raw clock_gettime syscalls, their own gap subtracted",
            self.rounds
        );
        let ratio = format!("x/{} median [q1-q3]", self.reference);
        let mut t = output::table(&[
            "path",
            "fastest ns",
            "median ns",
            &ratio,
            "heap allocations",
            "page faults",
            "call",
        ]);
        for p in &self.paths {
            t.add_row(vec![
                p.path.clone(),
                output::ns(p.min_ns),
                output::ns(p.median_ns),
                output::ratio_spread(p.ratio_to_reference, p.ratio_q1, p.ratio_q3),
                p.allocations.to_string(),
                format!("{}", p.median_page_faults),
                p.call.clone(),
            ]);
        }
        output::align_numbers(&mut t);
        println!("{t}");
    }
}

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
