//! Where the counts come from: a BPF counter (`fentry` on the time calls' own kernel
//! functions, or `tracepoint` on every system call's entry, the raw tracepoint
//! `sys_enter`) or perf's ring buffers (`perf`), chosen by `--backend`; all feed the one tally. `auto` takes the first that
//! opens in that order, saying why each better one did not.

use std::time::Duration;

use crate::top::perf::{self, Event};
use crate::top::tally::Tally;
use crate::top::tracefs::{SysEnter, TraceError};
use crate::top::{bpf, syscalls};

/// `--backend`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The best this kernel allows: fentry, else tracepoint, else perf (saying why).
    Auto,
    /// BPF programs on the time system calls' own kernel functions, counting inside the
    /// kernel; no other system call pays anything.
    Fentry,
    /// A BPF program on the raw tracepoint sys_enter counting inside the kernel.
    Tracepoint,
    /// Every call copied through perf's ring buffers and counted here.
    Perf,
}

/// An open source of counts.
pub enum Source {
    /// A BPF counter (fentry or tracepoint).
    Bpf(Box<bpf::Counter>),
    /// The perf tracer, and its events' buffer.
    Perf(perf::Tracer, Vec<Event>),
}

/// The source in use, its name (`backend` in the documents) and why it, where it is not
/// the best the tool has.
pub struct Chosen {
    /// The source.
    pub source: Source,
    /// `fentry`, `tracepoint` or `perf`.
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

/// Opens `backend`, `only` one process if given. `layout` is the syscall tracepoint's, or
/// why it cannot be had: only perf needs it.
pub fn open(
    backend: Backend,
    layout: Result<SysEnter, TraceError>,
    only: Option<u32>,
) -> Result<Chosen, TraceError> {
    let numbers = syscalls::numbers();
    let bpf = |name: &'static str, reason: Option<String>| {
        let counter = match name {
            "fentry" => bpf::Counter::fentry(only),
            _ => bpf::Counter::tracepoint(&numbers, &syscalls::clock_numbers(), only),
        }?;
        Ok(Chosen {
            source: Source::Bpf(Box::new(counter)),
            name,
            reason,
        })
    };
    let perf = |reason: Option<String>| -> Result<Chosen, TraceError> {
        let tracer = perf::Tracer::open(layout?, &numbers, only)?;
        Ok(Chosen {
            source: Source::Perf(tracer, Vec::new()),
            name: "perf",
            reason,
        })
    };
    match backend {
        Backend::Fentry => {
            bpf("fentry", Some("--backend fentry".into())).map_err(|u| refused("fentry", u))
        }
        Backend::Tracepoint => bpf("tracepoint", Some("--backend tracepoint".into()))
            .map_err(|u| refused("tracepoint", u)),
        Backend::Perf => perf(Some("--backend perf".into())),
        Backend::Auto => auto(
            || bpf("fentry", None),
            |why| bpf("tracepoint", Some(why)),
            |why| perf(Some(why)),
        ),
    }
}

/// BPF backend `name`, asked for by name, that could not start, as the error `top` exits
/// with: named, since the reason (a kernel without BTF, say) may not name it.
fn refused(name: &str, u: bpf::Unavailable) -> TraceError {
    let reason = format!("--backend {name}: {}", u.reason);
    if u.denied {
        TraceError::Denied(reason)
    } else {
        TraceError::Missing(reason)
    }
}

/// `--backend auto`: `fentry`, else `tracepoint` told why not fentry, else `perf` told
/// why neither; perf's own error carries both reasons too.
fn auto<T>(
    fentry: impl FnOnce() -> Result<T, bpf::Unavailable>,
    tracepoint: impl FnOnce(String) -> Result<T, bpf::Unavailable>,
    perf: impl FnOnce(String) -> Result<T, TraceError>,
) -> Result<T, TraceError> {
    let no_fentry = match fentry() {
        Ok(chosen) => return Ok(chosen),
        Err(u) => format!("fentry unavailable: {}", u.reason),
    };
    let why = match tracepoint(no_fentry.clone()) {
        Ok(chosen) => return Ok(chosen),
        Err(u) => format!("{no_fentry}; BPF tracepoint unavailable: {}", u.reason),
    };
    perf(why.clone()).map_err(|e| match e {
        TraceError::Denied(m) => TraceError::Denied(format!("{m}; {why}")),
        TraceError::Missing(m) => TraceError::Missing(format!("{m}; {why}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a backend did when tried: opened, or not with this reason.
    fn tried(
        name: &'static str,
        fails: Option<&str>,
        why: Option<String>,
    ) -> Result<(&'static str, Option<String>), bpf::Unavailable> {
        match fails {
            None => Ok((name, why)),
            Some(reason) => Err(bpf::Unavailable {
                reason: reason.into(),
                denied: false,
            }),
        }
    }

    /// `auto` with fentry and the tracepoint failing with `fentry` and `tracepoint`
    /// (None: it opens): the backend chosen and its reason.
    fn choose(fentry: Option<&str>, tracepoint: Option<&str>) -> (&'static str, Option<String>) {
        auto(
            || tried("fentry", fentry, None),
            |why| tried("tracepoint", tracepoint, Some(why)),
            |why| Ok(("perf", Some(why))),
        )
        .expect("perf opens")
    }

    #[test]
    fn auto_takes_fentry_where_it_opens_with_no_reason() {
        assert_eq!(choose(None, None), ("fentry", None));
    }

    #[test]
    fn each_fallback_says_why_the_better_backends_did_not_open() {
        let no_btf = "the kernel's BTF, /sys/kernel/btf/vmlinux (CONFIG_DEBUG_INFO_BTF), cannot \
                      be read: No such file or directory";
        assert_eq!(
            choose(Some(no_btf), None),
            ("tracepoint", Some(format!("fentry unavailable: {no_btf}")))
        );
        let refused = "the kernel refused to attach to __arm64_sys_clock_gettime: \
                       Unknown error 524 (fentry needs Linux 6.4 or later on aarch64)";
        let denied = "loading the BPF counter: Operation not permitted";
        let (name, why) = choose(Some(refused), Some(denied));
        assert_eq!(name, "perf");
        assert_eq!(
            why.as_deref(),
            Some(
                format!("fentry unavailable: {refused}; BPF tracepoint unavailable: {denied}")
                    .as_str()
            )
        );
    }

    #[test]
    fn perf_refused_too_is_an_error_with_every_reason() {
        let err = auto(
            || tried("fentry", Some("no BTF"), None),
            |why| tried("tracepoint", Some("no BPF"), Some(why)),
            |_| -> Result<(&str, Option<String>), _> {
                Err(TraceError::Denied("no CAP_PERFMON".into()))
            },
        );
        match err {
            Err(TraceError::Denied(m)) => assert_eq!(
                m,
                "no CAP_PERFMON; fentry unavailable: no BTF; BPF tracepoint unavailable: no BPF"
            ),
            other => panic!("{:?}", other.map(|_| ())),
        }
    }
}
