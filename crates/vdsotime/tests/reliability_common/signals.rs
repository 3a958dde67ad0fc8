//! A periodic SIGALRM whose handler reads the library, for the tests that check it is
//! async-signal-safe.

/// Installs `handler` for SIGALRM, with SA_RESTART so that barriers, sleeps and joins
/// carry on through it.
pub fn on_alarm(handler: extern "C" fn(libc::c_int)) {
    // SAFETY: a zeroed sigaction is valid; the handlers given here touch only atomics and
    // the library's async-signal-safe calls.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as usize;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        assert_eq!(libc::sigaction(libc::SIGALRM, &sa, std::ptr::null_mut()), 0);
    }
}

/// Makes SIGALRM arrive every `us` microseconds (0: stop).
pub fn alarm_every(us: i64) {
    let tv = libc::timeval {
        tv_sec: 0,
        tv_usec: us as _, // suseconds_t, whose width depends on the libc
    };
    let it = libc::itimerval {
        it_interval: tv,
        it_value: tv,
    };
    // SAFETY: setitimer reads one valid itimerval; the old value is not requested.
    let r = unsafe { libc::setitimer(libc::ITIMER_REAL, &it, std::ptr::null_mut()) };
    assert_eq!(r, 0, "setitimer: {}", std::io::Error::last_os_error());
}
