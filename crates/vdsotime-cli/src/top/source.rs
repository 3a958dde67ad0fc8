//! Where the counts come from: the BPF counter (`bpf`) or perf's ring buffers (`perf`),
//! chosen by `--backend`; both feed the one tally. `auto` takes BPF and falls back to
//! perf, saying why.

use std::time::Duration;

use crate::top::perf::{self, Event};
use crate::top::tally::Tally;
use crate::top::tracefs::{SysEnter, TraceError};
use crate::top::{bpf, syscalls};

/// `--backend`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The best this kernel allows: tracepoint, else perf (saying why).
    Auto,
    /// A BPF program on raw_syscalls:sys_enter counting inside the kernel.
    Tracepoint,
    /// Every call copied through perf's ring buffers and counted here.
    Perf,
}

/// An open source of counts.
pub enum Source {
    /// The BPF counter.
    Bpf(Box<bpf::Counter>),
    /// The perf tracer, and its events' buffer.
    Perf(perf::Tracer, Vec<Event>),
}

/// The source in use, its name (`backend` in the documents) and why it, where it is not
/// the best the tool has.
pub struct Chosen {
    /// The source.
    pub source: Source,
    /// `tracepoint` or `perf`.
    pub name: &'static str,
    /// Why not a better backend.
    pub reason: Option<String>,
}

impl Source {
    /// Feeds what happened since the last read to `tally`.
    pub fn read(&mut self, tally: &mut Tally) {
        match self {
            Source::Bpf(counter) => counter.read(tally),
            Source::Perf(tracer, events) => {
                events.clear();
                tracer.drain(events);
                tally.add(events);
            }
        }
    }

    /// What the count of `--pid`'s threads still misses, if anything (perf's filter
    /// names threads; the BPF counter counts by process).
    pub fn thread_limit(&self) -> Option<&'static str> {
        match self {
            Source::Bpf(_) => None,
            Source::Perf(tracer, _) => tracer.thread_limit(),
        }
    }

    /// How often to read.
    pub fn every(&self) -> Duration {
        match self {
            Source::Bpf(_) => bpf::READ_EVERY,
            Source::Perf(..) => perf::READ_EVERY,
        }
    }
}

/// Why auto does not use fentry.
const NO_FENTRY: &str = "fentry is not available in this build";

/// Opens `backend` on the tracepoint `layout`, `only` one process if given.
pub fn open(backend: Backend, layout: SysEnter, only: Option<u32>) -> Result<Chosen, TraceError> {
    let numbers = syscalls::numbers();
    let bpf = |reason: Option<String>| -> Result<Chosen, bpf::Unavailable> {
        let counter = bpf::Counter::open(&layout, &numbers, &syscalls::clock_numbers(), only)?;
        Ok(Chosen {
            source: Source::Bpf(Box::new(counter)),
            name: "tracepoint",
            reason,
        })
    };
    let perf = |reason: Option<String>| -> Result<Chosen, TraceError> {
        let tracer = perf::Tracer::open(layout, &numbers, only)?;
        Ok(Chosen {
            source: Source::Perf(tracer, Vec::new()),
            name: "perf",
            reason,
        })
    };
    match backend {
        Backend::Tracepoint => bpf(Some("--backend tracepoint".into())).map_err(|u| {
            if u.denied {
                TraceError::Denied(u.reason)
            } else {
                TraceError::Missing(u.reason)
            }
        }),
        Backend::Perf => perf(Some("--backend perf".into())),
        Backend::Auto => match bpf(Some(NO_FENTRY.into())) {
            Ok(chosen) => Ok(chosen),
            Err(u) => {
                let why = format!("BPF tracepoint unavailable: {}", u.reason);
                perf(Some(why.clone())).map_err(|e| match e {
                    TraceError::Denied(m) => TraceError::Denied(format!("{m}; {why}")),
                    TraceError::Missing(m) => TraceError::Missing(format!("{m}; {why}")),
                })
            }
        },
    }
}
