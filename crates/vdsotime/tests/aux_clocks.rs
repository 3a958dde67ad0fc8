//! The auxiliary clocks (`CLOCK_AUX + n`, Linux 6.17+ built with `CONFIG_POSIX_AUX_CLOCKS`)
//! against the kernel: the test enables two clocks that nothing uses (through
//! `/sys/kernel/time/aux_clocks/<n>/aux_clock_enable`), sets one with `clock_settime` and
//! steers it with `clock_adjtime` (frequency, then a step), and checks the library's
//! readings between the system call's, monotonic while steered; served in user space
//! (under a seccomp filter that denies the time system calls); a disabled clock and the id
//! past the last one failing as the system call fails (`ENODEV`, `EINVAL`); `clock_getres`
//! equal to the system call's; and the same inside a time namespace. The clocks it enabled
//! are disabled again at the end.
//!
//! On a kernel without them (Debian's images), every auxiliary id must fail as the system
//! call fails, and the rest is a visible skip (requirement `auxclock`).

mod reliability_common;

use std::path::Path;
use std::time::Duration;

use reliability_common::seccomp::install_filter;
use reliability_common::skip::skip;
use reliability_common::{bracket, child_mode, ns, run_child};
use vdsotime::{ClockId, Errno, Timespec};

const TEST: &str = "aux_clocks_against_the_kernel";
const SYSFS: &str = "/sys/kernel/time/aux_clocks";
const CLOCKSOURCE: &str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
/// The kernel's `MAX_AUX_CLOCKS`, and the first id past the last auxiliary clock.
const AUX_CLOCKS: u8 = 8;
const PAST_LAST: ClockId = ClockId::from_raw(16 + AUX_CLOCKS as i32);
/// What the test sets its clock to, and the steering: a frequency of +500 ppm, then a step.
const SET_S: i64 = 1_000_000;
const FREQ_PPM: i64 = 500;
const STEP_S: i64 = 3600;
/// `clock_adjtime` modes (include/uapi/linux/timex.h), the same on every architecture.
const ADJ_FREQUENCY: u32 = 0x0002;
const ADJ_SETOFFSET: u32 = 0x0100;
const ADJ_NANO: u32 = 0x2000;
/// The time namespace's offset on the monotonic clock, which auxiliary clocks do not follow.
const TIMENS_MONOTONIC_S: &str = "86400";

fn enable_path(n: u8) -> String {
    format!("{SYSFS}/{n}/aux_clock_enable")
}

fn is_enabled(n: u8) -> bool {
    std::fs::read_to_string(enable_path(n)).is_ok_and(|s| s.trim() == "1")
}

fn set_enabled(n: u8, on: bool) -> std::io::Result<()> {
    std::fs::write(enable_path(n), if on { "1" } else { "0" })
}

/// Disables the clocks the test enabled, also when it fails.
struct Restore(Vec<u8>);

impl Drop for Restore {
    fn drop(&mut self) {
        for &n in &self.0 {
            let _ = set_enabled(n, false);
        }
    }
}

/// `clock_adjtime(2)` with `modes`, the frequency (ppm scaled by 2^16) and the time step.
fn adjtime(clock: ClockId, modes: u32, freq: i64, step: Timespec) -> Result<(), Errno> {
    // SAFETY: an all-zero timex is a valid value of the plain C struct.
    let mut tx: libc::timex = unsafe { std::mem::zeroed() };
    tx.modes = modes as _;
    tx.freq = freq as _;
    tx.time.tv_sec = step.tv_sec as _;
    tx.time.tv_usec = step.tv_nsec as _;
    // SAFETY: clock_adjtime reads and writes one timex, which outlives the call.
    let r = unsafe { libc::syscall(libc::SYS_clock_adjtime, clock.as_raw(), &mut tx) };
    if r < 0 {
        Err(Errno::from_raw(
            std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
        ))
    } else {
        Ok(())
    }
}

fn settime(clock: ClockId, secs: i64) -> Result<(), Errno> {
    let ts = libc::timespec {
        tv_sec: secs as _,
        tv_nsec: 0,
    };
    // SAFETY: clock_settime reads one timespec, which outlives the call.
    let r = unsafe { libc::clock_settime(clock.as_raw() as _, &ts) };
    if r < 0 {
        Err(Errno::from_raw(
            std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
        ))
    } else {
        Ok(())
    }
}

/// Every auxiliary id and the one past them: the library's reading between the system
/// call's (or the same error), and the system call's resolution (or error).
fn all_like_the_syscall(what: &str) {
    for clock in (0..AUX_CLOCKS).map(ClockId::aux).chain([PAST_LAST]) {
        if let Err(e) = bracket(clock) {
            panic!("{what}: {e}");
        }
        assert_eq!(
            vdsotime::clock_getres(clock),
            vdsotime::syscall::clock_getres(clock),
            "{what}: clock_getres({clock:?})"
        );
    }
}

#[test]
fn aux_clocks_against_the_kernel() {
    match child_mode().as_deref() {
        Some("aux-seccomp") => return served_in_user_space(),
        Some("aux-timens") => return inside_a_time_namespace(),
        _ => {}
    }
    if !Path::new(SYSFS).is_dir() {
        all_like_the_syscall("no auxiliary clocks");
        return skip(
            TEST,
            "auxclock",
            format!("this kernel has no auxiliary clocks (no {SYSFS}); every id failed as the system call fails"),
        );
    }
    // Two clocks nobody uses: one to enable and steer, one that stays disabled.
    let free: Vec<u8> = (0..AUX_CLOCKS).filter(|&n| !is_enabled(n)).collect();
    let (on, off) = match free[..] {
        [on, off, ..] => (on, off),
        _ => {
            return skip(
                TEST,
                "auxclock",
                "fewer than two auxiliary clocks are disabled",
            )
        }
    };
    if let Err(e) = set_enabled(on, true) {
        return skip(TEST, "auxclock", format!("{}: {e}", enable_path(on)));
    }
    let _restore = Restore(vec![on]);
    let (clock, disabled) = (ClockId::aux(on), ClockId::aux(off));
    println!(
        "enabled {clock:?} ({}); {disabled:?} stays disabled",
        enable_path(on)
    );

    // Disabled and past the last: the system call's errors.
    assert_eq!(
        vdsotime::syscall::clock_gettime(disabled),
        Err(Errno::ENODEV)
    );
    assert_eq!(vdsotime::clock_gettime(disabled), Err(Errno::ENODEV));
    assert_eq!(
        vdsotime::syscall::clock_gettime(PAST_LAST),
        Err(Errno::EINVAL)
    );
    assert_eq!(vdsotime::clock_gettime(PAST_LAST), Err(Errno::EINVAL));
    all_like_the_syscall("enabled, not set");

    // Set, then steered: bracketed at each stage.
    if let Err(e) = settime(clock, SET_S) {
        return skip(TEST, "auxclock", format!("clock_settime({clock:?}): {e}"));
    }
    let set = bracket(clock).unwrap().expect("the enabled clock reads");
    println!("set to {SET_S} s: reads {set} ns");
    assert!((SET_S as i128 * 1_000_000_000..(SET_S as i128 + 60) * 1_000_000_000).contains(&set));
    adjtime(clock, ADJ_FREQUENCY, FREQ_PPM << 16, Timespec::default())
        .expect("clock_adjtime(ADJ_FREQUENCY)");
    let rate = measured_ppm(clock);
    println!("steered by {FREQ_PPM} ppm: runs {rate:+.0} ppm against CLOCK_MONOTONIC");
    assert!(
        (FREQ_PPM as f64 * 0.8..FREQ_PPM as f64 * 1.2).contains(&rate),
        "{clock:?} steered by {FREQ_PPM} ppm runs {rate} ppm fast"
    );
    let before_step = bracket(clock).unwrap().unwrap();
    let step = Timespec {
        tv_sec: STEP_S,
        tv_nsec: 0,
    };
    adjtime(clock, ADJ_SETOFFSET | ADJ_NANO, 0, step).expect("clock_adjtime(ADJ_SETOFFSET)");
    let stepped = bracket(clock).unwrap().unwrap();
    println!("stepped by {STEP_S} s: reads {stepped} ns");
    assert!(stepped - before_step >= STEP_S as i128 * 1_000_000_000);
    monotonic_while_steered(clock);
    all_like_the_syscall("enabled, set and steered");

    // In user space: the enabled clock under a filter that denies the system call.
    let run = run_child(TEST, "aux-seccomp", &[], Duration::from_secs(60));
    assert!(run.status.success(), "child under seccomp failed: {run:#?}");
    if run.stdout.contains("SECCOMP_UNSUPPORTED") {
        skip(
            TEST,
            "seccomp",
            "the emulator does not implement seccomp filters",
        );
    } else if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        assert_eq!(run.values("AUX_SERVED").len(), 1, "{run:#?}");
        println!("{}", run.stdout.trim_end());
    } else {
        skip(
            TEST,
            "seccomp",
            "no seccomp filter written for this architecture",
        );
    }

    // In a time namespace: the same readings as outside (auxiliary clocks have no offset).
    let outside = vdsotime::syscall::clock_gettime(clock).map(ns).unwrap();
    let run = run_child(
        TEST,
        "aux-timens",
        &[
            "unshare",
            "--time",
            "--fork",
            "--monotonic",
            TIMENS_MONOTONIC_S,
        ],
        Duration::from_secs(60),
    );
    let after = vdsotime::syscall::clock_gettime(clock).map(ns).unwrap();
    if !run.status.success() && run.stderr.contains("unshare") {
        return skip(
            TEST,
            "timens",
            format!("unshare --time: {}", run.stderr.trim()),
        );
    }
    assert!(
        run.status.success(),
        "child in a time namespace failed: {run:#?}"
    );
    let key = format!("INSIDE {}=", clock.as_raw());
    let values = run.values(&key);
    assert_eq!(values.len(), 1, "no {key} from the child: {run:#?}");
    let inside: i128 = values[0].parse().expect("child value");
    assert!(
        outside <= inside && inside <= after,
        "{clock:?} inside a time namespace: {inside} outside [{outside}, {after}]"
    );
    println!("in a time namespace: {clock:?} reads as outside (bracketed)");
}

/// How many ppm `clock` runs faster than `CLOCK_MONOTONIC`, over one-second windows of
/// the library's readings of both.
fn measured_ppm(clock: ClockId) -> f64 {
    let pair = || {
        let mono = vdsotime::clock_gettime(ClockId::MONOTONIC).map(ns).unwrap();
        let aux = vdsotime::clock_gettime(clock).map(ns).unwrap();
        (mono, aux)
    };
    // The kernel applies a new frequency at the clock's next second boundary
    // (`second_overflow` takes the new tick length), then converges its multiplier over a
    // few ticks: a window that starts at once sees only part of it (+53 to +327 ppm of 500
    // in 500 ms windows under TCG). So the first window waits past a second, and a window
    // short of the request is followed by another, up to five.
    std::thread::sleep(Duration::from_millis(1200));
    let mut rate = 0.0;
    for window in 1..=5 {
        let (m0, a0) = pair();
        std::thread::sleep(Duration::from_millis(1000));
        let (m1, a1) = pair();
        rate = ((a1 - a0) as f64 / (m1 - m0) as f64 - 1.0) * 1e6;
        println!("window {window} of 1 s: {rate:+.1} ppm");
        if (FREQ_PPM as f64 * 0.8..FREQ_PPM as f64 * 1.2).contains(&rate) {
            break;
        }
    }
    rate
}

/// The library's and the system call's readings, interleaved, never go back.
fn monotonic_while_steered(clock: ClockId) {
    let mut last = 0;
    for round in 0..20_000 {
        let lib = vdsotime::clock_gettime(clock).map(ns).unwrap();
        let sys = vdsotime::syscall::clock_gettime(clock).map(ns).unwrap();
        assert!(
            last <= lib && lib <= sys,
            "{clock:?} round {round}: {last} then library {lib} then system call {sys}"
        );
        last = sys;
    }
}

/// The child under seccomp: each enabled clock reads without the system call, each
/// disabled one reaches it (and gets the filter's `EPERM`).
fn served_in_user_space() {
    let enabled: Vec<bool> = (0..AUX_CLOCKS).map(is_enabled).collect();
    let clocksource = std::fs::read_to_string(CLOCKSOURCE).unwrap_or_default();
    println!("clocksource {}", clocksource.trim());
    install_filter();
    assert_eq!(
        vdsotime::syscall::clock_gettime(ClockId::MONOTONIC),
        Err(Errno::EPERM),
        "the filter denies the system call"
    );
    let mut served = Vec::new();
    for (n, on) in (0..AUX_CLOCKS).zip(enabled) {
        let clock = ClockId::aux(n);
        let got = vdsotime::clock_gettime(clock);
        if on {
            let cs = clocksource.trim();
            assert!(
                got.is_ok(),
                "enabled {clock:?} under seccomp (clocksource {cs}): {got:?}"
            );
            served.push(format!("{clock:?} = {} ns", ns(got.unwrap())));
        } else {
            assert_eq!(got, Err(Errno::EPERM), "disabled {clock:?} under seccomp");
        }
    }
    assert_eq!(vdsotime::clock_gettime(PAST_LAST), Err(Errno::EPERM));
    println!(
        "AUX_SERVED in user space under a filter denying clock_gettime: {}; disabled ones reached the system call",
        served.join(", ")
    );
    // Out before the test harness reads the time through the system call it denies.
    use std::io::Write;
    let _ = std::io::stdout().flush();
    std::process::exit(0)
}

/// The child in a time namespace: everything as the system call there; the enabled
/// clocks' readings for the parent to bracket.
fn inside_a_time_namespace() {
    // A line of its own: the harness has printed `test <name> ... ` without a newline.
    println!();
    all_like_the_syscall("in a time namespace");
    for n in (0..AUX_CLOCKS).filter(|&n| is_enabled(n)) {
        let clock = ClockId::aux(n);
        let v = vdsotime::clock_gettime(clock).map(ns).unwrap();
        println!("INSIDE {}={v}", clock.as_raw());
    }
}
