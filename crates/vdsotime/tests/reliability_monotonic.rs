//! Monotonicity across CPUs: threads pinned to different CPUs pass readings of MONOTONIC,
//! MONOTONIC_RAW, BOOTTIME (and MONOTONIC_COARSE) through one shared atomic. Each thread
//! reads the shared value, then its clock, and requires clock >= shared: a reading taken
//! after another CPU's reading became visible must not be earlier (a TSC skew between CPUs
//! or a torn seqlock read in the vDSO path would show up here).

mod reliability_common;

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Barrier};

use reliability_common::{expect_no_vdso, ns};
use vdsotime::ClockId;

/// The CPUs this process may run on.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity fills it.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let r = libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
        assert_eq!(
            r,
            0,
            "sched_getaffinity: {}",
            std::io::Error::last_os_error()
        );
        set
    };
    // SAFETY: CPU_ISSET only reads the set.
    (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

/// Pins the calling thread to `cpu` and checks that it took effect.
fn pin_to(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET writes within it; sched_setaffinity(0)
    // applies to the calling thread only.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        let r = libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        assert_eq!(
            r,
            0,
            "sched_setaffinity({cpu}): {}",
            std::io::Error::last_os_error()
        );
    }
    if let Ok((now, _)) = vdsotime::syscall::getcpu() {
        assert_eq!(now as usize, cpu, "pinned to {cpu} but running on {now}");
    }
}

/// Runs `per_thread` iterations on two threads per allowed CPU; returns (threads, backward
/// steps seen, first example).
fn pass_around(clock: ClockId, per_thread: u64) -> (usize, u64, Option<String>) {
    let cpus = allowed_cpus();
    let threads: Vec<usize> = cpus.iter().flat_map(|&c| [c, c]).collect();
    let shared = Arc::new(AtomicU64::new(0));
    let barrier = Arc::new(Barrier::new(threads.len()));
    let handles: Vec<_> = threads
        .iter()
        .map(|&cpu| {
            let (shared, barrier) = (shared.clone(), barrier.clone());
            std::thread::spawn(move || {
                pin_to(cpu);
                barrier.wait();
                let mut backward = 0u64;
                let mut example = None;
                for _ in 0..per_thread {
                    let seen = shared.load(SeqCst);
                    let t = vdsotime::clock_gettime(clock).expect("clock_gettime");
                    let now = u64::try_from(ns(t)).expect("non-negative reading");
                    if now < seen {
                        backward += 1;
                        example.get_or_insert_with(|| {
                            format!("cpu {cpu}: read {now} after another CPU published {seen}")
                        });
                    }
                    // CAS-max: publish our reading unless a later one is already there.
                    let mut cur = shared.load(SeqCst);
                    while cur < now {
                        match shared.compare_exchange_weak(cur, now, SeqCst, SeqCst) {
                            Ok(_) => break,
                            Err(actual) => cur = actual,
                        }
                    }
                }
                (backward, example)
            })
        })
        .collect();
    let mut backward = 0;
    let mut example = None;
    for h in handles {
        let (b, e) = h.join().expect("thread panicked");
        backward += b;
        example = example.or(e);
    }
    (threads.len(), backward, example)
}

#[test]
fn clocks_never_go_backwards_across_cpus() {
    // Under valgrind every call is a syscall and threads are serialised: fewer rounds.
    let per_thread = if expect_no_vdso() { 20_000 } else { 200_000 };
    let cpus = allowed_cpus();
    println!("CPUs allowed: {cpus:?}");
    let mut report = Vec::new();
    for clock in [
        ClockId::MONOTONIC,
        ClockId::MONOTONIC_RAW,
        ClockId::BOOTTIME,
        ClockId::MONOTONIC_COARSE,
    ] {
        let (threads, backward, example) = pass_around(clock, per_thread);
        println!("{clock:?}: {threads} threads x {per_thread} readings, {backward} backward steps");
        if backward > 0 {
            report.push(format!(
                "{clock:?}: {backward} backward steps, e.g. {}",
                example.unwrap()
            ));
        }
    }
    assert!(report.is_empty(), "{report:#?}");
}
