//! What a first-call measurement compares and reports: the paths a fresh probe process can
//! take, and the per-path figures. Shared by `bench` and `bench-getrandom`, which measure,
//! and by `report`, the `bench --json` document that carries them.

use serde::{Deserialize, Serialize};

use crate::output;

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
