//! The event source: `raw_syscalls:sys_enter` opened with `perf_event_open` on every CPU,
//! as `perf trace` does, with an in-kernel filter so only the time calls are sampled, each
//! sample (pid, tid, the raw record) read from a ring buffer per CPU. Exec and exit records
//! ride along so a process that starts and ends between two reads keeps its name.
//!
//! With `--pid`, the filter also names that process's threads (`common_pid` is a thread
//! id), up to [`MAX_FILTERED_THREADS`]: other processes' calls then never reach the
//! buffers, so a flood elsewhere on the host cannot crowd the watched process's samples
//! out. The kernel sets an event's filter once (a second `PERF_EVENT_IOC_SET_FILTER` is
//! refused with `EEXIST`), so when the process's threads change, the events are opened
//! again with the new filter and swapped in, CPU by CPU.

mod event;
mod ring;

pub use ring::Event;

use event::{open_cpu, switch};
use ring::Ring;

use crate::top::tracefs::{SysEnter, TraceError};

/// How often the buffers are read: a process making a million calls a second fills
/// about two fifths of a buffer in that time, so a read may come late by about as much
/// again before samples are lost.
pub const READ_EVERY: std::time::Duration = std::time::Duration::from_millis(10);
/// The kernel copies at most a page of filter text; past this many threads the filter
/// names none (every process's time calls reach the buffers, as without `--pid`) and the
/// process's calls are picked out here instead.
const MAX_FILTERED_THREADS: usize = 100;

/// The open events, one per CPU.
pub struct Tracer {
    rings: Vec<Ring>,
    layout: SysEnter,
    numbers: Vec<i64>,
    /// `--pid`: the process, and the threads the filter names now (`None`: it names
    /// none, as the process had too many to name).
    only: Option<(u32, Option<Vec<u32>>)>,
    /// Whether the filter has named threads at any time: then a thread's calls before
    /// the read that named it were missed.
    named_threads: bool,
}

/// What `--pid` still misses: a thread is named in the filter at the first read after it
/// starts, so its calls before that read are not counted.
pub const THREAD_LIMIT: &str = "a thread started while watching is counted from the first \
     read after it starts (reads are 10 ms apart)";

/// The tracepoint filter: `id == 228 || id == 96 || ...`, and with `threads`,
/// `(...) && (common_pid == 7 || ...)`.
pub fn filter(numbers: &[i64], threads: &[u32]) -> String {
    let parts: Vec<String> = numbers.iter().map(|n| format!("id == {n}")).collect();
    let calls = parts.join(" || ");
    if threads.is_empty() {
        return calls;
    }
    let tids: Vec<String> = threads
        .iter()
        .map(|t| format!("common_pid == {t}"))
        .collect();
    format!("({calls}) && ({})", tids.join(" || "))
}

/// The threads of `pid` now (`/proc/PID/task`), sorted; empty when the process is gone.
fn threads_of(pid: u32) -> Vec<u32> {
    let mut tids: Vec<u32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    tids.sort_unstable();
    tids
}

/// The threads a filter names for `tids`: `None` (no thread named) past
/// [`MAX_FILTERED_THREADS`].
fn to_name(tids: Vec<u32>) -> Option<Vec<u32>> {
    (tids.len() <= MAX_FILTERED_THREADS).then_some(tids)
}

/// The CPUs the kernel has brought up (`/sys/devices/system/cpu/online`: `0-3,5`).
fn online_cpus() -> Vec<i32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(a), Ok(b)) = (a.parse::<i32>(), b.parse::<i32>()) {
            cpus.extend(a..=b);
        }
    }
    cpus
}

impl Tracer {
    /// Opens, filters and maps the tracepoint on every online CPU. Each samples from its
    /// opening: what it took before its filter was set is other system calls, which
    /// [`crate::top::syscalls::call`] drops. With `only`, the filter also names that
    /// process's threads.
    pub fn open(
        layout: SysEnter,
        numbers: &[i64],
        only: Option<u32>,
    ) -> Result<Tracer, TraceError> {
        // The filter compares the initial namespace's thread ids: from inside another
        // PID namespace it names none, and the samples' ids (the kernel gives them in
        // the opener's namespace) pick the process out.
        let own_numbers = crate::top::process::in_initial_pid_namespace();
        let only = only.map(|pid| (pid, to_name(threads_of(pid)).filter(|_| own_numbers)));
        let threads = match &only {
            Some((_, Some(t))) => t.as_slice(),
            _ => &[],
        };
        let rings = open_all(&layout, &filter(numbers, threads))?;
        // On only now that every buffer is mapped.
        for r in &rings {
            switch(&r.fd, true);
        }
        let named_threads = matches!(only, Some((_, Some(_))));
        Ok(Tracer {
            rings,
            layout,
            numbers: numbers.to_vec(),
            only,
            named_threads,
        })
    }

    /// With `--pid`, when the process has a thread the filter does not name: opens
    /// the events again, off, with a filter naming the threads it has now, then on each
    /// CPU turns the old event off and the new one on, and reads what the old one holds
    /// into `out`. A call made between those two switches (microseconds) is not counted.
    /// If the new events cannot be opened, the old ones stay: the new threads' calls are
    /// then missed until a later read succeeds.
    fn follow_threads(&mut self, out: &mut Vec<Event>) {
        // A filter that names no thread already passes every thread's calls.
        let Some((pid, Some(named))) = &mut self.only else {
            return;
        };
        let now = threads_of(*pid);
        // Gone: keep the last filter, so what its threads left in the buffers is read.
        if now.is_empty() && !crate::top::process::alive(*pid) {
            return;
        }
        // Only a thread the filter does not name needs new events: one that has exited
        // costs nothing left in the filter (a reused id is another process's, which the
        // tally drops).
        if now.iter().all(|t| named.binary_search(t).is_ok()) {
            return;
        }
        let now = to_name(now);
        let threads = now.as_deref().unwrap_or_default();
        let Ok(fresh) = open_all(&self.layout, &filter(&self.numbers, threads)) else {
            return;
        };
        if fresh.len() != self.rings.len() {
            return; // a CPU came or went: the next read tries again
        }
        for (old, new) in self.rings.iter().zip(&fresh) {
            switch(&old.fd, false);
            switch(&new.fd, true);
            old.drain(&self.layout, out);
        }
        self.rings = fresh;
        self.only = Some((*pid, now));
    }

    /// What the count of the watched process's threads misses, if anything: with a
    /// filter that named its threads, a new thread's calls before the read that named it.
    pub fn thread_limit(&self) -> Option<&'static str> {
        self.named_threads.then_some(THREAD_LIMIT)
    }

    /// Takes every record written since the last call, in each CPU's order.
    pub fn drain(&mut self, out: &mut Vec<Event>) {
        self.follow_threads(out);
        for r in &self.rings {
            r.drain(&self.layout, out);
        }
    }
}

/// The event on every online CPU, each with `filter` and its buffer mapped, all off.
fn open_all(layout: &SysEnter, filter: &str) -> Result<Vec<Ring>, TraceError> {
    let rings = online_cpus()
        .into_iter()
        .map(|cpu| open_cpu(cpu, layout, filter))
        .collect::<Result<Vec<_>, _>>()?;
    if rings.is_empty() {
        return Err(TraceError::Missing("no online CPU listed".into()));
    }
    Ok(rings)
}

#[cfg(test)]
mod tests;
