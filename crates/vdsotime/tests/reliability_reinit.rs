//! `init_from_image` may be called again while other threads, and a signal handler on
//! the re-initialising thread itself, read `vdso()`: every reader must see one whole
//! image, its base with its own length, never one image's base with another's length
//! (issue 11: the base and the length were two atomics, stored and loaded one by one).
//!
//! The two images: the process's vDSO, and a copy with its section headers moved 512
//! bytes further, which is longer. The copy is not executable, so
//! nothing here may call a clock while it is bound: the readers only ask `vdso()`.

mod fixture_patch;
mod reliability_common;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::time::{Duration, Instant};

use fixture_patch::{leak_page_aligned, Elf};
use reliability_common::signals::{alarm_every, on_alarm};
use reliability_common::skip::skip;

const TEST: &str = "reinit_is_seen_whole_by_threads_and_signal_handlers";
const RUN_FOR: Duration = Duration::from_secs(2);
const MAX_RUN: Duration = Duration::from_secs(60);
/// Fewest publications, reader-thread checks and handler checks a run must reach.
const MIN_EACH: u64 = 1000;
/// How often the publisher looks at whether signals leave it time to publish.
const SLICE: Duration = Duration::from_millis(250);

/// (base, length) of the two images; what a reader sees must be one of these pairs.
static IMAGES: [[AtomicUsize; 2]; 2] = [const { [const { AtomicUsize::new(0) }; 2] }; 2];
static HANDLED: AtomicU64 = AtomicU64::new(0);
static TORN_IN_HANDLER: AtomicU64 = AtomicU64::new(0);

/// Whether `vdso()` now names one of the two images whole.
fn whole() -> bool {
    let Some(v) = vdsotime::vdso() else {
        return false; // an image is always published here
    };
    let seen = (v.base(), v.bytes().len());
    IMAGES
        .iter()
        .any(|[base, len]| seen == (base.load(SeqCst), len.load(SeqCst)))
}

extern "C" fn check_in_handler(_: libc::c_int) {
    HANDLED.fetch_add(1, SeqCst);
    if !whole() {
        TORN_IN_HANDLER.fetch_add(1, SeqCst);
    }
}

/// Keeps SIGALRM from this thread: the process's other threads take it.
fn block_alarm_in_this_thread() {
    // SAFETY: an initialised signal set, passed by pointer; the old mask is not requested.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGALRM);
        let r = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        assert_eq!(r, 0, "pthread_sigmask");
    }
}

/// Publishes the image at `addr` and returns its (base, length) as `vdso()` sees it.
fn publish(addr: usize) -> (usize, usize) {
    // SAFETY: `addr` is the kernel's vDSO or a leaked page-aligned copy of it: mapped and
    // unchanged for the life of the process. Only `vdso()` is asked while the copy is
    // bound, so its (non-executable) code is never called.
    unsafe { vdsotime::init_from_image(addr) };
    let v = vdsotime::vdso().expect("a valid image was published");
    (v.base(), v.bytes().len())
}

#[test]
fn reinit_is_seen_whole_by_threads_and_signal_handlers() {
    let Some(own) = vdsotime::vdso() else {
        return skip(TEST, "vdso", "no vDSO in this process to publish again");
    };
    let mut copy = Elf::new(own.bytes());
    copy.move_section_headers_past_end(512);
    let pairs = [publish(own.base()), publish(leak_page_aligned(&copy.bytes))];
    assert_ne!(
        pairs[0].1, pairs[1].1,
        "the two images must differ in length"
    );
    for (slot, (base, len)) in IMAGES.iter().zip(pairs) {
        slot[0].store(base, SeqCst);
        slot[1].store(len, SeqCst);
    }

    on_alarm(check_in_handler);
    // Every 20 µs natively; QEMU's signal emulation needs 100 times as long per signal.
    let emulated = std::env::var_os("VDSOTIME_EMULATOR").is_some();
    let mut interval: i64 = if emulated { 2000 } else { 20 };
    alarm_every(interval);
    let stop = AtomicBool::new(false);
    let checks = AtomicU64::new(0);
    let (torn, publishes) = std::thread::scope(|s| {
        let reader = s.spawn(|| {
            // The handler runs on the other threads: a signal every 20 µs could leave
            // this thread nothing but handlers on a busy machine (a run with 0 checks).
            block_alarm_in_this_thread();
            let mut torn = 0u64;
            while !stop.load(SeqCst) {
                checks.fetch_add(1, SeqCst);
                torn += u64::from(!whole());
            }
            torn
        });
        // At least RUN_FOR, and on until every reader has done enough (a loaded machine
        // may not schedule the reader for seconds), at most MAX_RUN.
        let start = Instant::now();
        let mut publishes = 0u64;
        let mut slice = (Instant::now(), 0u64);
        loop {
            for (base, _) in pairs {
                // SAFETY: as in `publish`.
                unsafe { vdsotime::init_from_image(base) };
                publishes += 1;
            }
            let enough = checks.load(SeqCst) >= MIN_EACH
                && HANDLED.load(SeqCst) >= MIN_EACH
                && publishes >= MIN_EACH;
            if (start.elapsed() >= RUN_FOR && enough) || start.elapsed() >= MAX_RUN {
                break;
            }
            // Signals that come faster than this thread handles them leave it only
            // handlers (34 publications in 2 s on a busy machine): then slow them down.
            if slice.0.elapsed() >= SLICE {
                if publishes - slice.1 < MIN_EACH / 10 && interval < 10_000 {
                    interval *= 2;
                    alarm_every(interval);
                }
                slice = (Instant::now(), publishes);
            }
        }
        stop.store(true, SeqCst);
        let torn = reader.join().expect("reader thread");
        (torn, publishes)
    });
    let checks = checks.load(SeqCst);
    alarm_every(0);
    publish(own.base());

    let (handled, torn_in_handler) = (HANDLED.load(SeqCst), TORN_IN_HANDLER.load(SeqCst));
    println!(
        "{publishes} publications; reader thread: {checks} checks, {torn} torn; \
         signal handler: {handled} checks, {torn_in_handler} torn; a signal every {interval} µs"
    );
    assert!(
        checks >= MIN_EACH && handled >= MIN_EACH && publishes >= MIN_EACH,
        "the readers did not run enough in {MAX_RUN:?}"
    );
    assert_eq!((torn, torn_in_handler), (0, 0), "a reader saw a torn image");
}
