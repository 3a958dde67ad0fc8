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

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::top::tracefs::{SysEnter, TraceError};

const PERF_TYPE_TRACEPOINT: u32 = 2;
const PERF_SAMPLE_TID: u64 = 1 << 1;
const PERF_SAMPLE_RAW: u64 = 1 << 10;
/// attr flag bits: disabled, comm, comm_exec.
const FLAG_DISABLED: u64 = 1;
const FLAG_COMM: u64 = 1 << 9;
const FLAG_COMM_EXEC: u64 = 1 << 24;
const PERF_RECORD_LOST: u32 = 2;
const PERF_RECORD_COMM: u32 = 3;
const PERF_RECORD_SAMPLE: u32 = 9;
/// Data pages of each ring buffer (a power of two): 2 MiB, about 23,000 samples of 88
/// bytes (x86_64's `sys_enter` record with its header).
const DATA_PAGES: usize = 512;
/// How often the buffers are read: a process making a million calls a second fills
/// about two fifths of a buffer in that time, so a read may come late by about as much
/// again before samples are lost.
pub const READ_EVERY: std::time::Duration = std::time::Duration::from_millis(10);
/// The kernel copies at most a page of filter text; past this many threads the filter
/// names none (every process's time calls reach the buffers, as without `--pid`) and the
/// process's calls are picked out here instead.
const MAX_FILTERED_THREADS: usize = 100;

/// `struct perf_event_attr` up to `PERF_ATTR_SIZE_VER5` (112 bytes).
#[repr(C)]
#[derive(Default)]
struct Attr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved: u16,
}

/// What the ring buffers carried.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A time system call entered: process, thread, number and first argument.
    Call {
        pid: u32,
        tid: u32,
        nr: i64,
        arg0: u64,
    },
    /// A process took a new name (exec): its pid and name.
    Comm { pid: u32, comm: String },
    /// Samples the kernel dropped because a buffer was full.
    Lost(u64),
}

/// One CPU's event and its ring buffer.
struct Ring {
    /// The event: open as long as its mapping is read.
    fd: OwnedFd,
    base: *mut u8,
    len: usize,
    page: usize,
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: `base`/`len` are the mapping made in `open_cpu`, unmapped once, here.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// The open events, one per CPU.
pub struct Tracer {
    rings: Vec<Ring>,
    layout: SysEnter,
    numbers: Vec<i64>,
    /// `--pid`: the process, and the threads the filter names now.
    only: Option<(u32, Vec<u32>)>,
}

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

/// The threads of `pid` now (`/proc/PID/task`), sorted; empty when there are too many to
/// name in a filter, or the process is gone.
fn threads_of(pid: u32) -> Vec<u32> {
    let mut tids: Vec<u32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    tids.sort_unstable();
    if tids.len() > MAX_FILTERED_THREADS {
        tids.clear();
    }
    tids
}

/// `_IOC_NONE` in an ioctl number's direction bits: 1 from bit 29 on powerpc and mips,
/// 0 elsewhere, read off `BLKFLSBUF`, which is `_IO(0x12, 97)`.
const IO_NONE: u32 = linux_raw_sys::ioctl::BLKFLSBUF - 0x1261;
/// `_IO('$', 0)` and `_IO('$', 1)`.
const PERF_EVENT_IOC_ENABLE: u32 = IO_NONE | 0x2400;
const PERF_EVENT_IOC_DISABLE: u32 = IO_NONE | 0x2401;

/// Turns the event `fd` on or off (which cannot fail on an event this process opened).
fn switch(fd: &OwnedFd, on: bool) {
    let request = if on {
        PERF_EVENT_IOC_ENABLE
    } else {
        PERF_EVENT_IOC_DISABLE
    };
    // SAFETY: an ioctl without an argument on an event this process opened.
    unsafe { libc::ioctl(fd.as_raw_fd(), request as _, 0) };
}

/// Sets `filter` on the event `fd` (once: the kernel refuses a second filter).
fn set_filter(fd: &OwnedFd, filter: &str) -> Result<(), TraceError> {
    let filter = std::ffi::CString::new(filter)
        .map_err(|_| TraceError::Missing("a filter with a NUL byte".into()))?;
    // SAFETY: the filter is a NUL-terminated string the kernel copies.
    let rc = unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            linux_raw_sys::ioctl::PERF_EVENT_IOC_SET_FILTER as _,
            filter.as_ptr(),
        )
    };
    if rc != 0 {
        let e = std::io::Error::last_os_error();
        return Err(TraceError::Missing(format!(
            "setting the tracepoint filter: {e}"
        )));
    }
    Ok(())
}

fn denied(what: &str, e: &std::io::Error) -> TraceError {
    TraceError::Denied(format!("{what}: {e}"))
}

/// Opens the event on `cpu` with `filter`, and its ring buffer; `disabled`: it samples
/// nothing until [`switch`]ed on.
fn open_cpu(cpu: i32, layout: &SysEnter, filter: &str, disabled: bool) -> Result<Ring, TraceError> {
    let attr = Attr {
        kind: PERF_TYPE_TRACEPOINT,
        size: std::mem::size_of::<Attr>() as u32,
        config: layout.id,
        sample_period: 1,
        sample_type: PERF_SAMPLE_TID | PERF_SAMPLE_RAW,
        flags: FLAG_COMM | FLAG_COMM_EXEC | if disabled { FLAG_DISABLED } else { 0 },
        // No wake-up per sample (an irq_work each): the buffers are read on a timer.
        wakeup_events: 0,
        ..Attr::default()
    };
    // SAFETY: `attr` is a valid perf_event_attr of the size it states; pid -1 with a CPU
    // is a system-wide event on that CPU; no group, no flags.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const Attr,
            -1 as libc::pid_t,
            cpu,
            -1 as libc::c_int,
            0 as libc::c_ulong,
        )
    };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::EACCES | libc::EPERM) => denied("perf_event_open", &e),
            _ => TraceError::Missing(format!("perf_event_open on CPU {cpu}: {e}")),
        });
    }
    // SAFETY: a new descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) };
    set_filter(&fd, filter)?;
    // SAFETY: sysconf has no memory effects.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    let len = page * (1 + DATA_PAGES);
    // SAFETY: a shared read-write mapping of the event's ring buffer, as perf_event_open(2)
    // describes; checked for MAP_FAILED below.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd.as_raw_fd(),
            0,
        )
    };
    if base == libc::MAP_FAILED {
        let e = std::io::Error::last_os_error();
        return Err(TraceError::Missing(format!(
            "mapping the ring buffer of CPU {cpu}: {e}"
        )));
    }
    Ok(Ring {
        fd,
        base: base.cast(),
        len,
        page,
    })
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
        let only = only.map(|pid| (pid, threads_of(pid)));
        let threads = only.as_ref().map_or(&[][..], |(_, t)| t.as_slice());
        let rings = open_all(&layout, &filter(numbers, threads), false)?;
        Ok(Tracer {
            rings,
            layout,
            numbers: numbers.to_vec(),
            only,
        })
    }

    /// With `--pid`, when the process has a thread the filter does not name: opens
    /// the events again, off, with a filter naming the threads it has now, then on each
    /// CPU turns the old event off and the new one on, and reads what the old one holds
    /// into `out`. A call made between those two switches (microseconds) is not counted.
    /// If the new events cannot be opened, the old ones stay: the new threads' calls are
    /// then missed until a later read succeeds.
    fn follow_threads(&mut self, out: &mut Vec<Event>) {
        let Some((pid, named)) = &mut self.only else {
            return;
        };
        let now = threads_of(*pid);
        // Gone: keep the last filter, so what its threads left in the buffers is read.
        if now.is_empty() && !named.is_empty() && !crate::top::process::alive(*pid) {
            return;
        }
        // Only a thread the filter does not name needs new events: one that has exited
        // costs nothing left in the filter (a reused id is another process's, which the
        // tally drops).
        if now.iter().all(|t| named.binary_search(t).is_ok()) {
            return;
        }
        let Ok(fresh) = open_all(&self.layout, &filter(&self.numbers, &now), true) else {
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
        *named = now;
    }

    /// Takes every record written since the last call, in each CPU's order.
    pub fn drain(&mut self, out: &mut Vec<Event>) {
        self.follow_threads(out);
        for r in &self.rings {
            r.drain(&self.layout, out);
        }
    }
}

/// The event on every online CPU, each with `filter`.
fn open_all(layout: &SysEnter, filter: &str, disabled: bool) -> Result<Vec<Ring>, TraceError> {
    let rings = online_cpus()
        .into_iter()
        .map(|cpu| open_cpu(cpu, layout, filter, disabled))
        .collect::<Result<Vec<_>, _>>()?;
    if rings.is_empty() {
        return Err(TraceError::Missing("no online CPU listed".into()));
    }
    Ok(rings)
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn int_at(b: &[u8], at: usize, size: usize) -> Option<u64> {
    match size {
        4 => u32_at(b, at).map(u64::from),
        8 => Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?)),
        _ => None,
    }
}

/// One record (header included, already unwrapped from the ring) as an event.
pub fn parse(record: &[u8], layout: &SysEnter) -> Option<Event> {
    let kind = u32_at(record, 0)?;
    let body = record.get(8..)?;
    match kind {
        PERF_RECORD_SAMPLE => {
            let (pid, tid, size) = (u32_at(body, 0)?, u32_at(body, 4)?, u32_at(body, 8)?);
            let raw = body.get(12..12 + size as usize)?;
            let nr = int_at(raw, layout.nr.0, layout.nr.1)?;
            // A 4-byte `long` is sign-extended: the id is signed.
            let nr = if layout.nr.1 == 4 {
                i64::from(nr as u32 as i32)
            } else {
                nr as i64
            };
            let arg0 = int_at(raw, layout.arg0.0, layout.arg0.1)?;
            Some(Event::Call { pid, tid, nr, arg0 })
        }
        PERF_RECORD_COMM => {
            let pid = u32_at(body, 0)?;
            let name = body.get(8..)?;
            let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            let comm = String::from_utf8_lossy(&name[..end]).into_owned();
            Some(Event::Comm { pid, comm })
        }
        PERF_RECORD_LOST => Some(Event::Lost(int_at(body, 8, 8)?)),
        _ => None,
    }
}

impl Ring {
    fn drain(&self, layout: &SysEnter, out: &mut Vec<Event>) {
        let size = self.page * DATA_PAGES;
        // SAFETY: the metadata page's data_head/data_tail (offsets 1024 and 1032) lie in
        // the mapping; head is read with acquire ordering after the kernel's writes, as
        // perf_event_open(2) asks, and tail is only written by this reader.
        let (head_ptr, tail_ptr) = unsafe {
            (
                &*(self.base.add(1024) as *const std::sync::atomic::AtomicU64),
                &*(self.base.add(1032) as *const std::sync::atomic::AtomicU64),
            )
        };
        let head = head_ptr.load(std::sync::atomic::Ordering::Acquire);
        let mut tail = tail_ptr.load(std::sync::atomic::Ordering::Relaxed);
        // The data area follows the metadata page and is `size` bytes long. Only the bytes
        // between tail and head are read: the buffer is mapped writable, so the kernel
        // does not overwrite them before data_tail moves past them (it drops samples
        // instead), while it may be writing the rest of the area.
        let data = self.base.wrapping_add(self.page);
        // SAFETY: `i < size`, inside the data area, within [tail, head) (see above).
        let byte = |i: usize| unsafe { data.add(i % size).read() };
        let mut wrapped = Vec::new();
        while tail < head {
            let at = (tail % size as u64) as usize;
            let len = usize::from(u16::from_ne_bytes([byte(at + 6), byte(at + 7)]));
            let unread = usize::try_from(head - tail).unwrap_or(usize::MAX);
            if len < 8 || len > unread {
                break;
            }
            // A record is read where it lies, unless it wraps around the buffer's end.
            let record = if at + len <= size {
                // SAFETY: `len` bytes from `at`, inside the data area and within
                // [tail, head), which the kernel does not write until tail moves.
                unsafe { std::slice::from_raw_parts(data.add(at), len) }
            } else {
                wrapped.clear();
                wrapped.extend((0..len).map(|i| byte(at + i)));
                &wrapped[..]
            };
            if let Some(e) = parse(record, layout) {
                out.push(e);
            }
            tail += len as u64;
        }
        tail_ptr.store(head, std::sync::atomic::Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAYOUT: SysEnter = SysEnter {
        id: 1,
        nr: (8, 8),
        arg0: (16, 8),
    };

    #[test]
    fn the_attr_has_the_size_of_version_5() {
        assert_eq!(std::mem::size_of::<Attr>(), 112);
    }

    #[test]
    fn a_sample_is_read_back() {
        let mut raw = vec![0u8; 64];
        raw[8..16].copy_from_slice(&228i64.to_ne_bytes());
        raw[16..24].copy_from_slice(&2u64.to_ne_bytes());
        let mut rec = Vec::new();
        rec.extend(PERF_RECORD_SAMPLE.to_ne_bytes());
        rec.extend(0u16.to_ne_bytes());
        rec.extend(((8 + 12 + raw.len()) as u16).to_ne_bytes());
        rec.extend(7u32.to_ne_bytes());
        rec.extend(8u32.to_ne_bytes());
        rec.extend((raw.len() as u32).to_ne_bytes());
        rec.extend(&raw);
        let want = Event::Call {
            pid: 7,
            tid: 8,
            nr: 228,
            arg0: 2,
        };
        assert_eq!(parse(&rec, &LAYOUT), Some(want));
        assert_eq!(parse(&rec[..20], &LAYOUT), None, "a cut record is refused");
    }

    /// The tracepoint's layout and the time calls' numbers, or why `test` cannot trace.
    fn tracing(test: &str) -> Option<(SysEnter, Vec<i64>)> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            crate::skip::skip(test, "perf", "not root: perf_event_open needs it");
            return None;
        }
        match crate::top::tracefs::locate().and_then(|d| crate::top::tracefs::sys_enter(&d)) {
            Ok(l) => Some((l, crate::top::syscalls::numbers())),
            Err(e) => {
                crate::skip::skip(test, "perf", format!("{e:?}"));
                None
            }
        }
    }

    /// `Tracer::open`, or a SKIP line when this root may not trace (no `CAP_PERFMON`).
    fn open(test: &str, layout: SysEnter, numbers: &[i64], only: Option<u32>) -> Option<Tracer> {
        match Tracer::open(layout, numbers, only) {
            Ok(t) => Some(t),
            Err(e) => {
                crate::skip::skip(test, "perf", format!("perf_event_open: {e:?}"));
                None
            }
        }
    }

    /// `n` direct `clock_gettime` system calls (no vDSO).
    fn direct_calls(n: usize) {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        for _ in 0..n {
            // SAFETY: a valid clock id and a valid out-pointer.
            unsafe { libc::syscall(libc::SYS_clock_gettime, libc::CLOCK_MONOTONIC, &mut ts) };
        }
    }

    /// The calls of thread `tid` (or of every thread of process `pid`) among `events`.
    fn calls(events: &[Event], pid: u32, tid: Option<u32>) -> usize {
        events
            .iter()
            .filter(|e| matches!(e, Event::Call { pid: p, tid: t, .. } if *p == pid && tid.is_none_or(|w| w == *t)))
            .count()
    }

    /// With `--pid`, the kernel's filter keeps every other process's calls out of the
    /// buffers: this process's own direct system calls never arrive while another process
    /// is watched, though a tracer watching everyone sees them all.
    #[test]
    fn with_a_pid_no_other_process_reaches_the_buffers() {
        const TEST: &str = "top::perf::tests::with_a_pid_no_other_process_reaches_the_buffers";
        let Some((layout, numbers)) = tracing(TEST) else {
            return;
        };
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("start sleep");
        let tracers =
            open(TEST, layout, &numbers, Some(child.id())).zip(open(TEST, layout, &numbers, None));
        let Some((mut watched, mut everyone)) = tracers else {
            let _ = child.kill();
            let _ = child.wait();
            return;
        };
        direct_calls(1000);
        let (mut seen_watched, mut seen_all) = (Vec::new(), Vec::new());
        watched.drain(&mut seen_watched);
        everyone.drain(&mut seen_all);
        let _ = child.kill();
        let _ = child.wait();
        let me = std::process::id();
        assert!(
            calls(&seen_all, me, None) >= 1000,
            "{}",
            calls(&seen_all, me, None)
        );
        assert_eq!(calls(&seen_watched, me, None), 0);
    }

    /// With `--pid`, a thread the process starts after the tracer opened is counted once a
    /// read has seen it: the events are opened again with a filter that names it (the
    /// kernel refuses to change an event's filter).
    #[test]
    fn with_a_pid_a_thread_started_later_is_counted() {
        const TEST: &str = "top::perf::tests::with_a_pid_a_thread_started_later_is_counted";
        let Some((layout, numbers)) = tracing(TEST) else {
            return;
        };
        let me = std::process::id();
        let Some(mut tracer) = open(TEST, layout, &numbers, Some(me)) else {
            return;
        };
        let started = std::sync::Barrier::new(2);
        let go = std::sync::Barrier::new(2);
        let mut events = Vec::new();
        let tid = std::thread::scope(|s| {
            let worker = s.spawn(|| {
                started.wait();
                go.wait();
                direct_calls(1000);
                // SAFETY: gettid has no preconditions.
                unsafe { libc::gettid() as u32 }
            });
            started.wait();
            // This read sees the new thread and names it in the filter.
            tracer.drain(&mut events);
            go.wait();
            worker.join().expect("the calling thread")
        });
        tracer.drain(&mut events);
        let lost: u64 = events
            .iter()
            .map(|e| if let Event::Lost(n) = e { *n } else { 0 })
            .sum();
        assert_eq!(lost, 0);
        assert_eq!(calls(&events, me, Some(tid)), 1000);
    }

    #[test]
    fn the_filter_names_every_number() {
        assert_eq!(filter(&[228, 96], &[]), "id == 228 || id == 96");
        assert_eq!(
            filter(&[228, 96], &[7, 8]),
            "(id == 228 || id == 96) && (common_pid == 7 || common_pid == 8)"
        );
    }
}
