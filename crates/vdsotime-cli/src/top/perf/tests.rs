//! The tracer against the real kernel: the `--pid` filter and the threads it follows.

use super::*;

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
    let _alone = crate::top::one_flood_at_a_time();
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
    let _alone = crate::top::one_flood_at_a_time();
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
    assert_eq!(lost(&events), 0);
    assert_eq!(calls(&events, me, Some(tid)), 1000);
}

/// With `--pid`, 150 threads the process starts after the tracer opened, more than a
/// filter names, are all counted: every call of every one, none lost.
#[test]
fn with_a_pid_150_threads_started_later_are_all_counted() {
    let _alone = crate::top::one_flood_at_a_time();
    const TEST: &str = "top::perf::tests::with_a_pid_150_threads_started_later_are_all_counted";
    const THREADS: usize = 150;
    const CALLS: usize = 100;
    let Some((layout, numbers)) = tracing(TEST) else {
        return;
    };
    let me = std::process::id();
    let Some(mut tracer) = open(TEST, layout, &numbers, Some(me)) else {
        return;
    };
    let started = std::sync::Barrier::new(THREADS + 1);
    let go = std::sync::Barrier::new(THREADS + 1);
    let mut events = Vec::new();
    let tids: Vec<u32> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|_| {
                s.spawn(|| {
                    started.wait();
                    go.wait();
                    direct_calls(CALLS);
                    // SAFETY: gettid has no preconditions.
                    unsafe { libc::gettid() as u32 }
                })
            })
            .collect();
        started.wait();
        // This read sees the threads: too many to name, the filter then names none.
        tracer.drain(&mut events);
        go.wait();
        // Read while they call, as top does: with no thread named, every process's time
        // calls fill the buffers, and one read at the end could find them overflowed.
        while !workers.iter().all(|w| w.is_finished()) {
            tracer.drain(&mut events);
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        workers
            .into_iter()
            .map(|w| w.join().expect("a calling thread"))
            .collect()
    });
    tracer.drain(&mut events);
    assert_eq!(lost(&events), 0);
    let counted: Vec<usize> = tids.iter().map(|&t| calls(&events, me, Some(t))).collect();
    assert!(counted.iter().all(|&n| n == CALLS), "{counted:?}");
}

#[test]
fn the_filter_names_every_number() {
    assert_eq!(filter(&[228, 96], &[]), "id == 228 || id == 96");
    assert_eq!(
        filter(&[228, 96], &[7, 8]),
        "(id == 228 || id == 96) && (common_pid == 7 || common_pid == 8)"
    );
}

/// The samples the kernel said it dropped.
fn lost(events: &[Event]) -> u64 {
    events
        .iter()
        .map(|e| if let Event::Lost(n) = e { *n } else { 0 })
        .sum()
}
