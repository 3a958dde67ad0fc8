//! The per-thread states of `vdsotime::getrandom`, each test in a fresh child process
//! so that the pool starts empty: 64 threads making their first call at once (with
//! signal handlers calling getrandom on them meanwhile), never sharing output; states given
//! back at thread exit and reused, so the mapped memory, counted both by the pool and
//! by the kernel (`/proc/self/smaps`, the `dp` droppable mappings), stays at one page
//! over 1,000 thread lifetimes; and a process that used up glibc's allocation-free
//! `pthread` keys gets the system call, with the same results.

mod getrandom_common;
mod reliability_common;

use std::collections::HashSet;
use std::os::unix::thread::JoinHandleExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use getrandom_common::skip;
use reliability_common::{child_mode, run_child};
use vdsotime::random::{self, PoolStats};
use vdsotime::GrndFlags;

/// Droppable memory this process has mapped, by the kernel's account.
fn droppable_bytes() -> usize {
    let smaps = std::fs::read_to_string("/proc/self/smaps").expect("read smaps");
    let mut total = 0;
    let mut size = 0;
    for line in smaps.lines() {
        if let Some(kb) = line.strip_prefix("Size:") {
            size = kb
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<usize>()
                .unwrap()
                * 1024;
        } else if let Some(flags) = line.strip_prefix("VmFlags:") {
            if flags.split_whitespace().any(|f| f == "dp") {
                total += size;
            }
        }
    }
    total
}

fn per_page() -> usize {
    random::params().map_or(1, |p| p.per_page().min(64))
}

fn run(test: &str) {
    let r = run_child(test, "child", &[], Duration::from_secs(120));
    assert!(r.status.success(), "{r:#?}");
    assert_eq!(r.values("CHILD_OK").len(), 1, "{r:#?}");
    for line in r.stdout.lines().filter(|l| l.starts_with("  ")) {
        println!("{line}");
    }
}

static SIGNALS: AtomicU64 = AtomicU64::new(0);
static SIGNAL_FAILURES: AtomicU64 = AtomicU64::new(0);

extern "C" fn on_signal(_: libc::c_int) {
    SIGNALS.fetch_add(1, SeqCst);
    let mut buf = [0u8; 16];
    if vdsotime::getrandom(&mut buf, GrndFlags::NONE) != Ok(16) || buf == [0; 16] {
        SIGNAL_FAILURES.fetch_add(1, SeqCst);
    }
}

fn install_handler() {
    // SAFETY: a zeroed sigaction is valid; the handler touches atomics and getrandom,
    // which is async-signal-safe; SA_RESTART keeps barriers and joins going.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
        sa.sa_flags = libc::SA_RESTART;
        assert_eq!(libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut()), 0);
    }
}

const FIRST: &str = "sixty_four_threads_take_their_first_state_at_once";

/// 64 threads released together make their first calls while another thread sends
/// them SIGUSR1 in turn (its handler calls getrandom, on a thread that may be taking
/// its state right then). A thread that finds another one mapping a page makes the
/// system call and tries again on its next call, so the threads keep calling, in
/// rounds, until each holds a state: then the pool must hold exactly 64 states, on
/// exactly as many pages as 64 states need.
#[test]
fn sixty_four_threads_take_their_first_state_at_once() {
    if child_mode().is_none() {
        return run(FIRST);
    }
    println!(); // the harness's "test ... " has no newline
    const THREADS: usize = 64;
    const ROUNDS: usize = 200;
    install_handler();
    let start = Arc::new(Barrier::new(THREADS + 1));
    let round = Arc::new(Barrier::new(THREADS + 1));
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..THREADS)
        .map(|_| {
            let (start, round, stop) = (Arc::clone(&start), Arc::clone(&round), Arc::clone(&stop));
            std::thread::spawn(move || {
                start.wait();
                let mut out = Vec::new();
                loop {
                    for _ in 0..50 {
                        let mut buf = [0u8; 32];
                        assert_eq!(vdsotime::getrandom(&mut buf, GrndFlags::NONE), Ok(32));
                        out.push(buf);
                    }
                    round.wait();
                    round.wait();
                    if stop.load(SeqCst) {
                        return out;
                    }
                }
            })
        })
        .collect();
    // As integers: `pthread_t` is a pointer on musl, which cannot cross threads.
    let targets: Vec<usize> = workers.iter().map(|w| w.as_pthread_t() as usize).collect();
    let signalling = Arc::new(AtomicBool::new(true));
    let mut signaller = Some({
        let signalling = Arc::clone(&signalling);
        std::thread::spawn(move || {
            while signalling.load(SeqCst) {
                for &t in &targets {
                    // SAFETY: every target is alive until `signalling` is cleared, which
                    // happens before any worker returns.
                    unsafe { libc::pthread_kill(t as libc::pthread_t, libc::SIGUSR1) };
                }
                std::thread::sleep(Duration::from_micros(200));
            }
        })
    });
    start.wait();
    let mut rounds = 0;
    let held = loop {
        round.wait();
        rounds += 1;
        let stats = random::pool_stats();
        let done = stats.in_use >= THREADS || random::params().is_none() || rounds == ROUNDS;
        if done {
            signalling.store(false, SeqCst);
            if let Some(t) = signaller.take() {
                t.join().unwrap();
            }
            stop.store(true, SeqCst);
        }
        round.wait();
        if done {
            break stats;
        }
    };
    let outputs: Vec<Vec<[u8; 32]>> = workers.into_iter().map(|t| t.join().unwrap()).collect();
    let after = random::pool_stats();

    let total: usize = outputs.iter().map(Vec::len).sum();
    let distinct: HashSet<&[u8; 32]> = outputs.iter().flatten().collect();
    assert_eq!(
        distinct.len(),
        total,
        "two draws repeated: threads shared a state"
    );
    let (signals, bad) = (SIGNALS.load(SeqCst), SIGNAL_FAILURES.load(SeqCst));
    assert_eq!(
        bad, 0,
        "{bad} of {signals} getrandom calls in the handler failed"
    );
    println!("  {total} draws on {THREADS} threads in {rounds} rounds, all distinct; {signals} handler calls");
    println!("  pool while held: {held:?}; after the threads exited: {after:?}");
    if random::params().is_some() {
        let pages = THREADS.div_ceil(per_page());
        let want = PoolStats {
            pages,
            states: pages * per_page(),
            in_use: THREADS,
        };
        assert_eq!(held, want, "one state per thread, no page mapped twice");
        assert_eq!(
            after,
            PoolStats { in_use: 0, ..want },
            "states given back at exit"
        );
    } else {
        assert_eq!(held, PoolStats::default());
    }
    println!("CHILD_OK");
}

const REUSE: &str = "states_return_at_thread_exit_and_are_reused";

#[test]
fn states_return_at_thread_exit_and_are_reused() {
    if child_mode().is_none() {
        return run(REUSE);
    }
    println!();
    const LIFETIMES: usize = 1000;
    const AT_ONCE: usize = 8;
    let before = (random::pool_stats(), droppable_bytes());
    let mut most = before;
    for _ in 0..LIFETIMES / AT_ONCE {
        let wave: Vec<_> = (0..AT_ONCE)
            .map(|_| {
                std::thread::spawn(|| {
                    let mut buf = [0u8; 16];
                    // Enough draws to take a state.
                    for _ in 0..=random::SYSCALL_DRAWS {
                        assert_eq!(vdsotime::getrandom(&mut buf, GrndFlags::NONE), Ok(16));
                    }
                })
            })
            .collect();
        wave.into_iter().for_each(|t| t.join().unwrap());
        let now = (random::pool_stats(), droppable_bytes());
        assert_eq!(
            now.0.in_use, 0,
            "a state was not given back at thread exit: {now:?}"
        );
        most = (
            PoolStats {
                pages: most.0.pages.max(now.0.pages),
                ..now.0
            },
            most.1.max(now.1),
        );
    }
    let page = random::params().map_or(0, |p| p.page_size);
    println!(
        "  {LIFETIMES} threads, {AT_ONCE} at once: at most {} pages in the pool, \
         {} droppable bytes mapped (before: {before:?})",
        most.0.pages, most.1
    );
    if random::params().is_some() {
        let pages = AT_ONCE.div_ceil(per_page());
        assert_eq!(
            most.0.pages, pages,
            "pages mapped for {AT_ONCE} threads at once"
        );
        assert_eq!(
            most.1,
            pages * page,
            "the kernel's count of droppable memory"
        );
    } else {
        assert_eq!(
            (most.0.pages, most.1),
            (0, 0),
            "no vDSO getrandom, no mapping"
        );
    }
    println!("CHILD_OK");
}

const KEYS: &str = "a_process_out_of_allocation_free_keys_uses_the_syscall";

/// glibc allocates on a thread's first use of a `pthread` key past the first 32, which
/// a signal handler must not do: such a process gets the system call.
#[test]
fn a_process_out_of_allocation_free_keys_uses_the_syscall() {
    if !cfg!(target_env = "gnu") {
        return skip(KEYS, "glibc", "only glibc allocates for keys past 32");
    }
    if child_mode().is_none() {
        return run(KEYS);
    }
    println!();
    for _ in 0..40 {
        let mut key: libc::pthread_key_t = 0;
        // SAFETY: `key` is writable; no destructor.
        assert_eq!(unsafe { libc::pthread_key_create(&mut key, None) }, 0);
    }
    let mut seen = HashSet::new();
    for _ in 0..1000 {
        let mut buf = [0u8; 16];
        assert_eq!(vdsotime::getrandom(&mut buf, GrndFlags::NONE), Ok(16));
        assert!(seen.insert(buf));
    }
    assert_eq!(
        random::pool_stats().in_use,
        0,
        "a state was taken with key >= 32"
    );
    println!("  40 keys created first: 1000 distinct draws through the system call");
    println!("CHILD_OK");
}
