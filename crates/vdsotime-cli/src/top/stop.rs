//! SIGINT and SIGTERM end a watch instead of the process: the handler only records that
//! one came, and the watch, which wakes every [`crate::top::perf::READ_EVERY`], prints
//! what it counted so far and exits.

use std::sync::atomic::{AtomicBool, Ordering};

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
