//! `vdsotime::Instant` behaves as `std::time::Instant` does: the same operators, the same
//! saturation, and the same panics (message included) at the same overflow points. Both
//! read `CLOCK_MONOTONIC`, so readings taken together overflow at the same durations.

use std::panic::{catch_unwind, UnwindSafe};
use std::time::Duration;

type Std = std::time::Instant;
type Ours = vdsotime::Instant;

/// The panic message of `f`, or `None` when it returns.
fn panic_message<R>(f: impl FnOnce() -> R + UnwindSafe) -> Option<String> {
    let payload = catch_unwind(f).err()?;
    Some(match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(p) => p
            .downcast::<&str>()
            .map(|s| s.to_string())
            .unwrap_or_default(),
    })
}

/// Whole seconds from a `CLOCK_MONOTONIC` reading up to the largest one the type holds,
/// and down to the smallest.
fn headroom(now: Ours) -> (u64, u64) {
    let secs = now.as_timespec().tv_sec;
    ((i64::MAX - secs) as u64, secs.unsigned_abs() + (1 << 63))
}

#[test]
fn overflow_panics_where_and_as_std_does() {
    let (ours, std) = (Ours::now(), Std::now());
    let (up, down) = headroom(ours);
    // 10 s on either side of each limit: the two readings differ by far less.
    let secs = Duration::from_secs;
    let (fits_up, past_up) = (secs(up - 10), secs(up + 10));
    let (fits_down, past_down) = (secs(down - 10), secs(down + 10));
    for d in [fits_up, past_up] {
        assert_eq!(
            ours.checked_add(d).is_some(),
            std.checked_add(d).is_some(),
            "+ {d:?}"
        );
    }
    for d in [fits_down, past_down] {
        assert_eq!(
            ours.checked_sub(d).is_some(),
            std.checked_sub(d).is_some(),
            "- {d:?}"
        );
    }
    assert!(ours.checked_add(fits_up).is_some() && ours.checked_add(past_up).is_none());
    assert!(ours.checked_sub(fits_down).is_some() && ours.checked_sub(past_down).is_none());
    for d in [past_up, Duration::MAX] {
        let expected = panic_message(move || std + d);
        assert!(expected.is_some(), "std's + did not panic for {d:?}");
        assert_eq!(panic_message(move || ours + d), expected, "+ {d:?}");
        let expected = panic_message(move || {
            let mut s = std;
            s += d;
        });
        assert_eq!(
            panic_message(move || {
                let mut o = ours;
                o += d;
            }),
            expected,
            "+= {d:?}"
        );
    }
    for d in [past_down, Duration::MAX] {
        let expected = panic_message(move || std - d);
        assert!(expected.is_some(), "std's - did not panic for {d:?}");
        assert_eq!(panic_message(move || ours - d), expected, "- {d:?}");
        let expected = panic_message(move || {
            let mut s = std;
            s -= d;
        });
        assert_eq!(
            panic_message(move || {
                let mut o = ours;
                o -= d;
            }),
            expected,
            "-= {d:?}"
        );
    }
    assert_eq!(panic_message(move || ours + fits_up), None);
    assert_eq!(panic_message(move || ours - fits_down), None);
}

#[test]
fn the_arithmetic_gives_what_std_gives() {
    let (ours, std) = (Ours::now(), Std::now());
    for d in [
        Duration::ZERO,
        Duration::from_nanos(1),
        Duration::from_nanos(999_999_999),
        Duration::from_secs(3600) + Duration::from_nanos(7),
    ] {
        let (later, std_later) = (ours + d, std + d);
        assert_eq!(later - ours, std_later - std, "{d:?}");
        assert_eq!(later - d, ours);
        assert_eq!(std_later - d, std);
        let (mut o, mut s) = (ours, std);
        o += d;
        s += d;
        assert_eq!(o - ours, s - std);
        o -= d;
        s -= d;
        assert_eq!((o, s), (ours, std));
        // An earlier instant minus a later one: zero in both (std saturates since 1.60).
        assert_eq!(ours - later, std - std_later);
        assert_eq!(ours - later, Duration::ZERO);
        assert_eq!(
            ours.duration_since(later),
            std.duration_since(std_later),
            "{d:?}"
        );
        assert_eq!(
            ours.saturating_duration_since(later),
            std.saturating_duration_since(std_later)
        );
        assert_eq!(
            later.checked_duration_since(ours),
            std_later.checked_duration_since(std)
        );
        assert_eq!(
            ours.checked_duration_since(later).is_none(),
            std.checked_duration_since(std_later).is_none()
        );
        assert_eq!(
            ours.checked_sub(d).map(|e| ours - e),
            std.checked_sub(d).map(|e| std - e)
        );
    }
}

#[test]
fn elapsed_grows_as_std_s_does() {
    let (ours, std) = (Ours::now(), Std::now());
    std::thread::sleep(Duration::from_millis(20));
    let (a, b) = (ours.elapsed(), std.elapsed());
    assert!(a >= Duration::from_millis(20) && b >= Duration::from_millis(20));
    // Read together, so within the time the two readings took (far under a second).
    assert!(a.abs_diff(b) < Duration::from_secs(1), "{a:?} {b:?}");
}
