//! Forking a multi-threaded test process from a state every machine handles, QEMU user
//! mode included.
//!
//! `join` returns once a thread's exit is announced (its thread id cleared), but under
//! QEMU user mode the host thread behind it still holds the emulator's thread-creation
//! lock for a moment after that. A fork in that moment copies the lock held by a thread
//! the child does not have, and the child's first new thread waits for it forever
//! (QEMU's fork preparation takes its CPU-list and mmap locks, not that one). Waiting
//! until the kernel no longer lists the joined threads closes the window; natively the
//! wait is over at once.

use std::time::{Duration, Instant};

/// The threads of this process, as the kernel lists them.
pub fn threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .count()
}

/// Waits until this process has no more threads than `before` (counted by [`threads`]
/// before the joined threads were started): then none is still on its way out.
pub fn wait_for_exits(before: usize) {
    let start = Instant::now();
    loop {
        let now = threads();
        if now <= before {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{now} threads still listed 30 s after they were joined, {before} before"
        );
        std::thread::sleep(Duration::from_micros(100));
    }
}
