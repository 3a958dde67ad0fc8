//! A signal handler that calls getrandom while the thread it interrupted is inside
//! getrandom, on the same state: the vDSO's `in_use` flag sends the nested call to the
//! system call, and both calls must still return every byte asked for, with no block
//! of output repeated or left zero (a state used twice at once would hand out the same
//! buffered bytes, or the zeros the vDSO leaves behind as it consumes them).
//!
//! In a child process, the test thread calls getrandom for 64 KiB at a time (tens of
//! microseconds inside the vDSO each) while another thread sends it SIGUSR1 every
//! 50 µs. On x86-64 with a vDSO getrandom the handler reads the interrupted
//! instruction pointer and counts the signals that landed inside the vDSO; elsewhere
//! (other architectures, no vDSO) those that landed between the flag the test sets
//! before each call and clears after it.

mod getrandom_common;
mod reliability_common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reliability_common::{child_mode, run_child};
use vdsotime::GrndFlags;

const TEST: &str = "a_signal_handler_calls_getrandom_inside_getrandom";
const RUN_FOR: Duration = Duration::from_secs(2);
/// Signals that must land inside the vDSO's getrandom for the test to count as exercised.
const MIN_INSIDE: u64 = 10;
/// How long the run goes on past `RUN_FOR` while fewer have landed: an emulated machine
/// (a kernel under TCG on a busy host) makes few calls in `RUN_FOR`.
const RUN_AT_MOST: Duration = Duration::from_secs(60);
const OUTER: usize = 64 * 1024;
const SLOTS: usize = 1 << 16;

/// The handler's draws, written only by the handler (one slot each, by a counter).
struct Draws(std::cell::UnsafeCell<[[u8; 32]; SLOTS]>);
// SAFETY: each slot is written by one handler run, claimed by `DRAWN`, and read only
// after the signalling thread has stopped.
unsafe impl Sync for Draws {}
static DRAWS: Draws = Draws(std::cell::UnsafeCell::new([[0; 32]; SLOTS]));
static DRAWN: AtomicUsize = AtomicUsize::new(0);
static FAILURES: AtomicU64 = AtomicU64::new(0);
static INSIDE: AtomicU64 = AtomicU64::new(0);
static IN_CALL: AtomicBool = AtomicBool::new(false);
static VDSO_RANGE: (AtomicUsize, AtomicUsize) = (AtomicUsize::new(0), AtomicUsize::new(0));

/// Whether the interrupted code was inside getrandom.
fn interrupted_inside(ctx: *mut libc::c_void) -> bool {
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    if VDSO_RANGE.0.load(SeqCst) != 0 {
        // SAFETY: with SA_SIGINFO the third handler argument is the interrupted
        // thread's ucontext_t.
        let pc =
            unsafe { (*ctx.cast::<libc::ucontext_t>()).uc_mcontext.gregs[libc::REG_RIP as usize] }
                as usize;
        let (start, end) = (VDSO_RANGE.0.load(SeqCst), VDSO_RANGE.1.load(SeqCst));
        return (start..end).contains(&pc);
    }
    let _ = ctx;
    IN_CALL.load(SeqCst)
}

extern "C" fn on_signal(_: libc::c_int, _: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    if interrupted_inside(ctx) {
        INSIDE.fetch_add(1, SeqCst);
    }
    let mut buf = [0u8; 32];
    if vdsotime::getrandom(&mut buf, GrndFlags::NONE) != Ok(32) {
        FAILURES.fetch_add(1, SeqCst);
    }
    let slot = DRAWN.fetch_add(1, SeqCst);
    if slot < SLOTS {
        // SAFETY: `slot` was claimed by this handler run alone (see `Draws`).
        unsafe { (*DRAWS.0.get())[slot] = buf };
    }
}

#[test]
fn a_signal_handler_calls_getrandom_inside_getrandom() {
    if child_mode().is_none() {
        let r = run_child(TEST, "child", &[], Duration::from_secs(120));
        assert!(r.status.success(), "{r:#?}");
        assert_eq!(r.values("CHILD_OK").len(), 1, "{r:#?}");
        println!("{}", r.values("RESULT ").join("\n"));
        return;
    }
    println!();
    if let (Some(v), Some(_)) = (vdsotime::vdso(), vdsotime::random::params()) {
        VDSO_RANGE.0.store(v.base(), SeqCst);
        VDSO_RANGE.1.store(v.base() + v.bytes().len(), SeqCst);
    }
    // SAFETY: a zeroed sigaction is valid; the handler touches atomics, its own slot
    // and getrandom, which is async-signal-safe.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal
            as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void)
            as usize;
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
        assert_eq!(libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut()), 0);
    }
    // SAFETY: pthread_self has no preconditions.
    let me = unsafe { libc::pthread_self() } as usize; // a pointer on musl: not Send
    let running = Arc::new(AtomicBool::new(true));
    let signaller = {
        let running = Arc::clone(&running);
        std::thread::spawn(move || {
            while running.load(SeqCst) {
                // SAFETY: the target thread outlives this loop (it joins us).
                unsafe { libc::pthread_kill(me as libc::pthread_t, libc::SIGUSR1) };
                std::thread::sleep(Duration::from_micros(50));
            }
        })
    };
    // The vDSO never returns less than asked; the system call may, after a page, when
    // a signal is pending (`get_random_bytes_user`).
    // Without `std`, `getrandom()` is the system call even where the vDSO has one.
    let vdso = vdsotime::path(vdsotime::Function::Getrandom) != vdsotime::Path::Syscall;
    let mut outer = vec![0u8; OUTER];
    let mut blocks: HashSet<[u8; 32]> = HashSet::new();
    let (mut calls, mut repeats) = (0u64, 0u64);
    let start = Instant::now();
    let exercised = || !vdso || INSIDE.load(SeqCst) >= MIN_INSIDE;
    while start.elapsed() < RUN_FOR || (!exercised() && start.elapsed() < RUN_AT_MOST) {
        IN_CALL.store(true, SeqCst);
        let r = vdsotime::getrandom(&mut outer, GrndFlags::NONE);
        IN_CALL.store(false, SeqCst);
        let n = r.expect("the interrupted call");
        assert!(
            n == OUTER || (!vdso && n >= 4096 && n % 32 == 0),
            "{n} bytes of {OUTER}"
        );
        calls += 1;
        for b in outer[..n].chunks_exact(32) {
            if !blocks.insert(b.try_into().unwrap()) {
                repeats += 1;
            }
        }
    }
    running.store(false, SeqCst);
    signaller.join().unwrap();

    let drawn = DRAWN.load(SeqCst).min(SLOTS);
    // SAFETY: the signalling thread has stopped, so no handler runs any more.
    let all: &[[u8; 32]; SLOTS] = unsafe { &*DRAWS.0.get() };
    for d in &all[..drawn] {
        if !blocks.insert(*d) {
            repeats += 1;
        }
    }
    let (inside, failures) = (INSIDE.load(SeqCst), FAILURES.load(SeqCst));
    println!(
        "RESULT {calls} calls of {OUTER} bytes, {drawn} handler calls, {inside} of them \
         interrupting getrandom; {repeats} repeated or zero 32-byte blocks"
    );
    assert_eq!(failures, 0, "getrandom in the handler failed");
    assert_eq!(repeats, 0, "a block of output came out twice");
    assert!(
        !blocks.contains(&[0; 32]),
        "a zero block: the state was consumed twice"
    );
    if vdso {
        assert!(
            inside >= MIN_INSIDE,
            "only {inside} signals landed inside getrandom in {:?}: not exercised",
            start.elapsed()
        );
    }
    println!("CHILD_OK");
}
