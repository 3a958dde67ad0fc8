//! SIGINT and SIGTERM end a watch instead of the process: the handler only records that
//! one came, and the watch ([`watch`]), which wakes every read interval, reads once more,
//! prints what it counted and exits.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::Relaxed);
}

/// From now on SIGINT and SIGTERM set [`interrupted`] instead of ending the process.
pub fn catch() {
    let handler = on_signal as extern "C" fn(libc::c_int);
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
        libc::signal(libc::SIGTERM, handler as libc::sighandler_t);
    }
}

/// Whether SIGINT or SIGTERM came since [`catch`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Calls `read` every `every` until `length` has passed or `stopped` says a signal came,
/// and once after that. Whether a read is the last is decided before it starts, so a
/// signal that comes while one runs gets one more: every call made before the signal is
/// read (deciding after the read lost the calls made while it ran).
pub fn watch(
    length: Duration,
    every: Duration,
    mut read: impl FnMut(),
    stopped: impl Fn() -> bool,
) {
    let start = Instant::now();
    loop {
        let left = length.saturating_sub(start.elapsed());
        std::thread::sleep(left.min(every));
        let last = left.is_zero() || stopped();
        read();
        if last {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// For each read, whether the signal had come when it started, with a signal that
    /// comes during read number `signal_during` (0: none).
    fn reads(length: Duration, signal_during: usize) -> Vec<bool> {
        let signalled = Cell::new(false);
        let mut seen = Vec::new();
        watch(
            length,
            Duration::ZERO,
            || {
                seen.push(signalled.get());
                if seen.len() == signal_during {
                    signalled.set(true);
                }
            },
            || signalled.get(),
        );
        seen
    }

    #[test]
    fn a_signal_during_a_read_gets_one_more_read() {
        assert_eq!(reads(Duration::from_secs(3600), 1), [false, true]);
        assert_eq!(
            reads(Duration::from_secs(3600), 3),
            [false, false, false, true]
        );
    }

    #[test]
    fn the_interval_ends_with_a_read() {
        assert_eq!(reads(Duration::ZERO, 0), [false]);
        let some = reads(Duration::from_millis(20), 0);
        assert!(some.len() >= 2 && some.iter().all(|s| !s), "{some:?}");
    }
}
