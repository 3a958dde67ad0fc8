//! `bench --peers`: the "what time is it" calls of other crates and vdsotime's own
//! `Instant`, so a user can see what switching would buy. (std and rustix's dynamic
//! `clock_gettime` are columns of the main table.) Each peer is timed interleaved with
//! the raw vDSO `clock_gettime` of the clock it reads (`CLOCK_MONOTONIC` for the TSC
//! readers, which replace it) and reported as a ratio to it.

use std::hint::black_box;
use std::time::Duration;

use vdsotime::ClockId;

use crate::measure::Probe;

/// One peer row.
#[derive(Debug)]
pub struct Peer {
    /// What is called, e.g. `std::time::Instant::now`.
    pub function: &'static str,
    /// The crate (the JSON `path`).
    pub path: &'static str,
    /// The clock it reads, when it reads a kernel clock.
    pub clock: Option<ClockId>,
    /// How it reads it, for the table.
    pub source: &'static str,
    /// The measurement.
    pub probe: Probe,
}

impl Peer {
    /// The clock whose raw vDSO reading this peer is compared with.
    pub fn reference_clock(&self) -> ClockId {
        self.clock.unwrap_or(ClockId::MONOTONIC)
    }
}

/// Every peer, in table order.
pub fn all() -> Vec<Peer> {
    vec![
        Peer {
            function: "rustix::time::clock_gettime",
            path: "rustix",
            clock: Some(ClockId::MONOTONIC),
            source: "rustix's own vDSO lookup",
            probe: Probe::new(|| {
                let t = rustix::time::clock_gettime(black_box(rustix::time::ClockId::Monotonic));
                black_box(&t);
            }),
        },
        Peer {
            function: "quanta::Instant::now",
            path: "quanta",
            clock: None,
            source: "calibrated TSC",
            probe: Probe::new(|| {
                let t = quanta::Instant::now();
                black_box(&t);
            }),
        },
        Peer {
            function: "minstant::Instant::now",
            path: "minstant",
            clock: None,
            source: "TSC, else coarse clock",
            probe: Probe::new(|| {
                let t = minstant::Instant::now();
                black_box(&t);
            }),
        },
        Peer {
            function: "coarsetime::Instant::now",
            path: "coarsetime",
            clock: Some(ClockId::MONOTONIC_COARSE),
            source: "libc clock_gettime",
            probe: Probe::new(|| {
                let t = coarsetime::Instant::now();
                black_box(&t);
            }),
        },
        Peer {
            function: "vdsotime::Instant::now",
            path: "vdsotime",
            clock: Some(ClockId::MONOTONIC),
            source: "vdsotime",
            probe: Probe::new(|| {
                let t = vdsotime::Instant::now();
                black_box(&t);
            }),
        },
        Peer {
            function: "vdsotime wall clock (REALTIME -> Duration)",
            path: "vdsotime",
            clock: Some(ClockId::REALTIME),
            source: "vdsotime",
            probe: Probe::new(|| {
                let now = vdsotime::clock_gettime(ClockId::REALTIME)
                    .ok()
                    .and_then(|t| Duration::try_from(t).ok());
                black_box(&now);
            }),
        },
        Peer {
            function: "libc::syscall(SYS_clock_gettime)",
            path: "raw-syscall",
            clock: Some(ClockId::MONOTONIC),
            source: "the bare syscall, to compare with vdsotime's syscall path",
            probe: Probe::new(|| {
                let mut ts = [0 as libc::c_long; 2];
                // SAFETY: the kernel writes a native struct timespec into `ts`.
                let r = unsafe {
                    libc::syscall(
                        libc::SYS_clock_gettime,
                        black_box(libc::CLOCK_MONOTONIC),
                        ts.as_mut_ptr(),
                    )
                };
                black_box((r, ts[0], ts[1]));
            }),
        },
    ]
}
