//! Counting: the calls of each (process, system call, clock), the facts of each process
//! at first sight, and the rows they make with their reasons and cost.

use std::collections::HashMap;

use serde::Serialize;

use crate::top::clocks;
use crate::top::host::Host;
use crate::top::perf::Event;
use crate::top::price;
use crate::top::process::{self, Facts};
use crate::top::reason;
use crate::top::syscalls::{self, Abi, Call};

/// One row of the output.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Row {
    /// Process id.
    pub pid: u32,
    /// Its name.
    pub comm: String,
    /// Its executable, where it could be read.
    pub exe: Option<String>,
    /// The system call.
    pub syscall: &'static str,
    /// The clock's name, for the calls that take one.
    pub clock: Option<String>,
    /// Calls seen.
    pub calls: u64,
    /// Calls per second over the interval.
    pub per_second: f64,
    /// The reason's stable code.
    pub reason: &'static str,
    /// What to change.
    pub fix: String,
    /// CPU seconds per second these calls cost over the vDSO's: calls/s × (system call
    /// − vDSO), the system call timed here for this clock, the vDSO by the doctor.
    /// `null` for a clock the vDSO never serves (`vdso_path` false).
    pub wasted_cpu: Option<f64>,
    /// ns one such system call costs here, timed for its own clock (for the calls that
    /// take one).
    pub syscall_ns: Option<f64>,
    /// Whether the vDSO could ever serve this call and clock: false for CPU-time,
    /// dynamic, disabled aux and unknown clocks, which have no vDSO cost to save.
    pub vdso_path: bool,
    /// The process had exited when the row was made.
    pub exited: bool,
    /// A ptrace tracer attached to the process, `strace (pid 9)`: each call also stops
    /// for it, whatever the reason.
    pub traced: Option<String>,
    /// The C library it maps: `glibc 2.41` (the newest `GLIBC_2.N` its symbols define),
    /// `glibc`, `musl`; `null` for none recognised.
    pub libc: Option<String>,
    /// The facts about the process that could not be read, each with why (and what
    /// privilege would reveal it).
    pub unknown: Vec<String>,
}

/// The counts of one interval.
#[derive(Default)]
pub struct Tally {
    counts: HashMap<(u32, Call, Option<i32>), u64>,
    facts: HashMap<u32, Facts>,
    /// Names from exec records, for processes gone before /proc was read.
    comms: HashMap<u32, String>,
    /// Calls not counted: samples the kernel dropped (perf), or calls the full map
    /// could not count (BPF).
    pub lost: u64,
    /// Only this process, if set.
    pub only: Option<u32>,
    /// This process (the tool itself), never counted.
    pub own: u32,
    /// Each (call, clock priced as, [`price::priced_as`]) timed so far, ns a system call
    /// ([`price::syscall_ns`]).
    prices: HashMap<(Call, i32), Option<f64>>,
}

impl Tally {
    /// A tally of `only` (or everything), leaving out this process. The one process
    /// watched is alive now, so it is read now: a process that makes its calls and is gone
    /// before the first of them is read (perf's rings are read in batches) keeps its name
    /// and what it runs.
    pub fn new(only: Option<u32>) -> Tally {
        let mut facts = HashMap::new();
        if let Some(pid) = only {
            let read = process::read(pid);
            if !read.comm.is_empty() {
                facts.insert(pid, read);
            }
        }
        Tally {
            only,
            own: std::process::id(),
            facts,
            ..Tally::default()
        }
    }

    /// Counts a batch of events; a process is examined the first time it is seen.
    pub fn add(&mut self, events: &[Event]) {
        for e in events {
            match e {
                Event::Lost(n) => self.lost += n,
                // pid 0: a process outside this PID namespace, whose names do not help.
                Event::Comm { pid: 0, .. } => {}
                Event::Comm { pid, comm } => {
                    self.comms.insert(*pid, comm.clone());
                    // An exec (or a rename): what was read of the process may describe
                    // the program it was before (a forked child's first system calls
                    // precede its exec), so it is read again at its next call.
                    self.facts.remove(pid);
                }
                Event::Call { pid, nr, arg0, .. } => self.count(*pid, None, *nr, *arg0, 1),
            }
        }
    }

    /// Counts `n` calls of number `nr` by `pid` with first argument `arg0`; the process
    /// is examined the first time it is seen. `nr` is in `abi` where the counter knew the
    /// table the call entered by (fentry), else in the ABI of the process's executable.
    pub fn count(&mut self, pid: u32, abi: Option<Abi>, nr: i64, arg0: u64, n: u64) {
        if pid == self.own || self.only.is_some_and(|o| o != pid) {
            return;
        }
        let facts = self.facts.entry(pid).or_insert_with(|| process::read(pid));
        let Some(call) = syscalls::call(abi.unwrap_or_else(|| facts.abi()), nr) else {
            return;
        };
        // clockid_t is an int: the low 32 bits of the register.
        let clock = call.takes_clock().then_some(arg0 as u32 as i32);
        *self.counts.entry((pid, call, clock)).or_default() += n;
    }

    /// The name of `pid` taken by the kernel when it was first seen, for a process gone
    /// before /proc was read.
    // The BPF counter's: a 32-bit build has none.
    #[cfg_attr(not(target_pointer_width = "64"), allow(dead_code))]
    pub fn name(&mut self, pid: u32, comm: String) {
        self.comms.entry(pid).or_insert(comm);
    }

    /// Clears the counts for the next interval of the live view; the facts of processes
    /// still running stay, those of exited ones go (their ids may be reused).
    pub fn reset(&mut self) {
        self.counts.clear();
        self.lost = 0;
        self.facts.retain(|&pid, _| process::alive(pid));
        self.comms.retain(|&pid, _| process::alive(pid));
    }

    /// The rows over `seconds`, most calls first. A clock seen for the first time is
    /// timed here.
    pub fn rows(&mut self, seconds: f64, host: &Host) -> Vec<Row> {
        for &(_, call, clock) in self.counts.keys() {
            if let Some(id) = clock.and_then(price::priced_as) {
                self.prices
                    .entry((call, id))
                    .or_insert_with(|| price::syscall_ns(call, id));
            }
        }
        let mut rows: Vec<Row> = self
            .counts
            .iter()
            .map(|(&(pid, call, clock), &calls)| {
                let facts = self.facts.get(&pid).cloned().unwrap_or_default();
                let judged = reason::judge(call, clock, &facts, host);
                let per_second = calls as f64 / seconds;
                let clock_name = clock.map(clocks::name);
                let syscall_ns = clock
                    .and_then(price::priced_as)
                    .and_then(|id| self.prices.get(&(call, id)).copied().flatten());
                let vdso_path = price::has_vdso_path(clock, &host.aux_enabled);
                let wasted_cpu = vdso_path
                    .then(|| host.waste_ns(call.name(), clock_name.as_deref(), syscall_ns))
                    .flatten()
                    .map(|ns| per_second * ns * 1e-9);
                let comm = if facts.comm.is_empty() {
                    self.comms.get(&pid).cloned().unwrap_or_default()
                } else {
                    facts.comm.clone()
                };
                Row {
                    pid,
                    comm,
                    exe: facts.exe.clone(),
                    syscall: call.name(),
                    clock: clock_name,
                    calls,
                    per_second,
                    reason: judged.reason.code(),
                    fix: judged.fix,
                    wasted_cpu,
                    syscall_ns,
                    vdso_path,
                    exited: pid != 0 && !process::alive(pid),
                    traced: facts
                        .tracer
                        .as_ref()
                        .map(|(tpid, tcomm)| format!("{tcomm} (pid {tpid})")),
                    libc: facts.libc.as_ref().map(process::Libc::label),
                    unknown: facts.unknown.clone(),
                }
            })
            .collect();
        rows.sort_by(|a, b| b.calls.cmp(&a.calls).then(a.pid.cmp(&b.pid)));
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_process_call_and_clock_and_leaves_itself_out() {
        let me = std::process::id();
        let nr = syscalls::number(syscalls::Abi::Native, Call::ClockGettime).unwrap();
        let mut t = Tally::new(None);
        let call = |pid, arg0| Event::Call {
            pid,
            tid: pid,
            nr,
            arg0,
        };
        t.add(&[
            call(me, 1),
            call(1, 1),
            call(1, 1),
            call(1, 2),
            Event::Lost(3),
        ]);
        let rows = t.rows(2.0, &Host::default());
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(
            (rows[0].pid, rows[0].calls, rows[0].per_second),
            (1, 2, 1.0)
        );
        assert_eq!(rows[0].clock.as_deref(), Some("CLOCK_MONOTONIC"));
        assert_eq!(rows[1].reason, "cpu_time_clock");
        assert_eq!(t.lost, 3);
    }

    /// The live view runs for days: what it learnt of each exited process must not pile
    /// up, nor describe the next process given its id.
    #[test]
    fn an_exited_process_s_facts_go_at_the_next_interval() {
        let mut t = Tally::new(None);
        let nr = syscalls::number(syscalls::Abi::Native, Call::Gettimeofday).unwrap();
        let call = |pid| Event::Call {
            pid,
            tid: pid,
            nr,
            arg0: 0,
        };
        let gone = u32::MAX - 1; // no such process
        let running = std::process::id(); // this one, counted when not `own`
        t.own = 0;
        t.add(&[
            Event::Comm {
                pid: gone,
                comm: "brief".into(),
            },
            call(gone),
            call(running),
        ]);
        t.reset();
        assert!(!t.facts.contains_key(&gone) && !t.comms.contains_key(&gone));
        assert!(t.facts.contains_key(&running));
    }

    /// A child's facts read between its fork and its exec (its first calls, such as
    /// rt_sigaction, reach the tally) described the parent's program after the exec.
    #[test]
    fn an_exec_makes_the_process_be_read_again() {
        let mut t = Tally::new(None);
        t.own = 0;
        let pid = std::process::id();
        let nr = syscalls::number(syscalls::Abi::Native, Call::Gettimeofday).unwrap();
        let call = Event::Call {
            pid,
            tid: pid,
            nr,
            arg0: 0,
        };
        t.add(std::slice::from_ref(&call));
        assert!(t.facts.contains_key(&pid));
        t.add(&[Event::Comm {
            pid,
            comm: "execed".into(),
        }]);
        assert!(
            !t.facts.contains_key(&pid),
            "facts from before the exec kept"
        );
        t.add(&[call]);
        assert!(t.facts.contains_key(&pid), "read again at the next call");
    }

    #[test]
    fn a_process_gone_before_it_was_read_keeps_its_exec_name() {
        let mut t = Tally::new(None);
        let pid = u32::MAX - 1; // no such process
        let nr = syscalls::number(syscalls::Abi::Native, Call::Gettimeofday).unwrap();
        t.add(&[
            Event::Comm {
                pid,
                comm: "brief".into(),
            },
            Event::Call {
                pid,
                tid: pid,
                nr,
                arg0: 0,
            },
        ]);
        let rows = t.rows(1.0, &Host::default());
        assert_eq!((rows[0].comm.as_str(), rows[0].exited), ("brief", true));
        assert_eq!(rows[0].reason, "exited_unchecked");
        assert_eq!(rows[0].clock, None);
    }
}
