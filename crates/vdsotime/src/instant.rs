//! `Instant`: a monotonic reading with the arithmetic people expect from std's.

use crate::{clock_gettime, ClockId, Timespec};
use core::time::Duration;

/// A reading of `CLOCK_MONOTONIC`, like `std::time::Instant` but from this crate's
/// fast path and usable without `std`.
///
/// ```
/// use vdsotime::Instant;
/// let start = Instant::now();
/// let later = Instant::now();
/// assert!(later >= start);
/// assert_eq!(start.duration_since(later), core::time::Duration::ZERO); // saturates
/// assert!(start.elapsed() >= later.duration_since(start));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(Timespec);

impl Instant {
    /// Now. `CLOCK_MONOTONIC` cannot fail on Linux unless a seccomp filter denies
    /// the syscall in a process without a vDSO; this then returns the zero instant
    /// (use [`Instant::try_now`] to see the error).
    #[inline]
    pub fn now() -> Instant {
        Instant(clock_gettime(ClockId::MONOTONIC).unwrap_or_default())
    }

    /// Now, or the kernel's error.
    #[inline]
    pub fn try_now() -> Result<Instant, crate::Errno> {
        clock_gettime(ClockId::MONOTONIC).map(Instant)
    }

    /// The time since `earlier`, zero if `earlier` is later.
    pub fn duration_since(&self, earlier: Instant) -> Duration {
        self.checked_duration_since(earlier).unwrap_or_default()
    }

    /// The time since `earlier`, `None` if `earlier` is later.
    pub fn checked_duration_since(&self, earlier: Instant) -> Option<Duration> {
        let nanos = self.0.as_nanos().checked_sub(earlier.0.as_nanos())?;
        let nanos = u128::try_from(nanos).ok()?;
        let secs = u64::try_from(nanos / 1_000_000_000).ok()?;
        Some(Duration::new(secs, (nanos % 1_000_000_000) as u32))
    }

    /// The time since this instant.
    pub fn elapsed(&self) -> Duration {
        Instant::now().duration_since(*self)
    }

    /// `self + d`, `None` on overflow.
    pub fn checked_add(&self, d: Duration) -> Option<Instant> {
        let nanos = self
            .0
            .as_nanos()
            .checked_add(i128::try_from(d.as_nanos()).ok()?)?;
        Some(Instant(from_nanos(nanos)?))
    }

    /// `self - d`, `None` on overflow.
    pub fn checked_sub(&self, d: Duration) -> Option<Instant> {
        let nanos = self
            .0
            .as_nanos()
            .checked_sub(i128::try_from(d.as_nanos()).ok()?)?;
        Some(Instant(from_nanos(nanos)?))
    }

    /// The reading itself.
    pub const fn as_timespec(&self) -> Timespec {
        self.0
    }
}

fn from_nanos(nanos: i128) -> Option<Timespec> {
    let sec = i64::try_from(nanos.div_euclid(1_000_000_000)).ok()?;
    Some(Timespec {
        tv_sec: sec,
        tv_nsec: nanos.rem_euclid(1_000_000_000) as i64,
    })
}

impl core::ops::Sub for Instant {
    type Output = Duration;
    /// Saturating, like `duration_since`.
    fn sub(self, earlier: Instant) -> Duration {
        self.duration_since(earlier)
    }
}
