//! `Instant`: a monotonic reading with the arithmetic people expect from std's.

use crate::{clock_gettime, ClockId, Timespec};
use core::time::Duration;

/// A reading of `CLOCK_MONOTONIC`, like `std::time::Instant` but from this crate's
/// fast path and usable without `std`.
///
/// It has std's methods and operators, with std's behaviour: `Instant - Instant` and
/// [`Instant::duration_since`] saturate to zero, `Instant ± Duration` (and `+=`, `-=`)
/// panic on overflow exactly where std's do, and the `checked_*` methods are the
/// non-panicking way. Reading the clock never panics; only these operators can, as
/// std's do, and only for an instant the clock cannot reach.
///
/// ```
/// use core::time::Duration;
/// use vdsotime::Instant;
/// let start = Instant::now();
/// let later = Instant::now();
/// assert!(later >= start);
/// assert_eq!(start.duration_since(later), Duration::ZERO); // saturates
/// assert_eq!(start - later, Duration::ZERO); // so does `-`
/// assert!(start.elapsed() >= later.duration_since(start));
/// let deadline = start + Duration::from_millis(5);
/// assert_eq!(deadline - start, Duration::from_millis(5));
/// assert_eq!(deadline - Duration::from_millis(5), start);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(Timespec);

impl Instant {
    /// Now: `CLOCK_MONOTONIC` through [`crate::clock_gettime`].
    ///
    /// # Fallback
    ///
    /// As [`crate::clock_gettime`]: the vDSO where it serves the clock, else the system
    /// call.
    ///
    /// # Errors
    ///
    /// None is returned: `CLOCK_MONOTONIC` cannot fail on Linux unless a seccomp filter
    /// denies the system call in a process that must make it; this then returns the zero
    /// instant (use [`Instant::try_now`] to see the error).
    ///
    /// # Example
    ///
    /// ```
    /// let a = vdsotime::Instant::now();
    /// let b = vdsotime::Instant::now();
    /// assert!(a <= b && a.as_timespec().is_normalized());
    /// ```
    #[inline]
    pub fn now() -> Instant {
        Instant(clock_gettime(ClockId::MONOTONIC).unwrap_or_default())
    }

    /// Now, or the kernel's error.
    ///
    /// # Fallback
    ///
    /// As [`Instant::now`].
    ///
    /// # Errors
    ///
    /// [`crate::clock_gettime`]'s for `CLOCK_MONOTONIC`: only what a seccomp filter makes
    /// the system call return, where the call has to make it.
    ///
    /// # Example
    ///
    /// ```
    /// let start = vdsotime::Instant::try_now()?;
    /// assert!(start.elapsed() < core::time::Duration::from_secs(60));
    /// # Ok::<(), vdsotime::Errno>(())
    /// ```
    #[inline]
    pub fn try_now() -> Result<Instant, crate::Errno> {
        clock_gettime(ClockId::MONOTONIC).map(Instant)
    }

    /// The time since `earlier`, zero if `earlier` is later (as std's since Rust 1.60).
    ///
    /// Arithmetic on the two readings only: no clock is read, nothing can fail.
    ///
    /// # Example
    ///
    /// ```
    /// use core::time::Duration;
    /// let start = vdsotime::Instant::now();
    /// let later = start + Duration::from_millis(3);
    /// assert_eq!(later.duration_since(start), Duration::from_millis(3));
    /// assert_eq!(start.duration_since(later), Duration::ZERO);
    /// ```
    pub fn duration_since(&self, earlier: Instant) -> Duration {
        self.saturating_duration_since(earlier)
    }

    /// The time since `earlier`, zero if `earlier` is later.
    ///
    /// The same as [`Instant::duration_since`], under the name std also gives it.
    ///
    /// # Example
    ///
    /// ```
    /// use core::time::Duration;
    /// let start = vdsotime::Instant::now();
    /// let later = start + Duration::from_secs(1);
    /// assert_eq!(start.saturating_duration_since(later), Duration::ZERO);
    /// ```
    pub fn saturating_duration_since(&self, earlier: Instant) -> Duration {
        self.checked_duration_since(earlier).unwrap_or_default()
    }

    /// The time since `earlier`, `None` if `earlier` is later.
    ///
    /// # Example
    ///
    /// ```
    /// use core::time::Duration;
    /// let start = vdsotime::Instant::now();
    /// let later = start + Duration::from_micros(250);
    /// assert_eq!(later.checked_duration_since(start), Some(Duration::from_micros(250)));
    /// assert_eq!(start.checked_duration_since(later), None);
    /// ```
    pub fn checked_duration_since(&self, earlier: Instant) -> Option<Duration> {
        let nanos = self.0.as_nanos().checked_sub(earlier.0.as_nanos())?;
        let nanos = u128::try_from(nanos).ok()?;
        let secs = u64::try_from(nanos / 1_000_000_000).ok()?;
        Some(Duration::new(secs, (nanos % 1_000_000_000) as u32))
    }

    /// The time since this instant: [`Instant::now`] minus it, zero if it lies ahead.
    ///
    /// # Fallback
    ///
    /// Reads `CLOCK_MONOTONIC` as [`Instant::now`] does.
    ///
    /// # Example
    ///
    /// ```
    /// use core::time::Duration;
    /// let start = vdsotime::Instant::now();
    /// assert!(start.elapsed() < Duration::from_secs(60));
    /// let ahead = start + Duration::from_secs(3600);
    /// assert_eq!(ahead.elapsed(), Duration::ZERO);
    /// ```
    pub fn elapsed(&self) -> Duration {
        Instant::now().duration_since(*self)
    }

    /// `self + d`, `None` when the result does not fit in a [`Timespec`] (the
    /// non-panicking form of `Instant + Duration`).
    ///
    /// # Example
    ///
    /// ```
    /// use core::time::Duration;
    /// let start = vdsotime::Instant::now();
    /// let deadline = start.checked_add(Duration::from_millis(10)).unwrap();
    /// assert_eq!(deadline - start, Duration::from_millis(10));
    /// assert_eq!(start.checked_add(Duration::MAX), None);
    /// ```
    pub fn checked_add(&self, d: Duration) -> Option<Instant> {
        let nanos = self
            .0
            .as_nanos()
            .checked_add(i128::try_from(d.as_nanos()).ok()?)?;
        Timespec::from_nanos(nanos).ok().map(Instant)
    }

    /// `self - d`, `None` when the result does not fit in a [`Timespec`] (the
    /// non-panicking form of `Instant - Duration`). The result may lie before boot:
    /// `CLOCK_MONOTONIC` readings are signed.
    ///
    /// # Example
    ///
    /// ```
    /// use core::time::Duration;
    /// let now = vdsotime::Instant::now();
    /// let before = now.checked_sub(Duration::from_millis(10)).unwrap();
    /// assert_eq!(now - before, Duration::from_millis(10));
    /// assert_eq!(now.checked_sub(Duration::MAX), None);
    /// ```
    pub fn checked_sub(&self, d: Duration) -> Option<Instant> {
        let nanos = self
            .0
            .as_nanos()
            .checked_sub(i128::try_from(d.as_nanos()).ok()?)?;
        Timespec::from_nanos(nanos).ok().map(Instant)
    }

    /// The reading itself: the `CLOCK_MONOTONIC` time it was taken at.
    ///
    /// # Example
    ///
    /// ```
    /// let t = vdsotime::Instant::now().as_timespec();
    /// assert!(t.is_normalized() && t.tv_sec >= 0);
    /// ```
    pub const fn as_timespec(&self) -> Timespec {
        self.0
    }
}

impl core::ops::Sub for Instant {
    type Output = Duration;
    /// Saturating, like [`Instant::duration_since`] and std's `Instant - Instant`.
    fn sub(self, earlier: Instant) -> Duration {
        self.duration_since(earlier)
    }
}

impl core::ops::Add<Duration> for Instant {
    type Output = Instant;
    /// `self + d`, as std's `Instant + Duration`.
    ///
    /// # Panics
    /// When the result does not fit, with std's message "overflow when adding duration
    /// to instant"; [`Instant::checked_add`] returns `None` instead.
    fn add(self, d: Duration) -> Instant {
        self.checked_add(d)
            .expect("overflow when adding duration to instant")
    }
}

impl core::ops::AddAssign<Duration> for Instant {
    /// `*self = *self + d`.
    ///
    /// # Panics
    /// As `Instant + Duration`.
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl core::ops::Sub<Duration> for Instant {
    type Output = Instant;
    /// `self - d`, as std's `Instant - Duration`.
    ///
    /// # Panics
    /// When the result does not fit, with std's message "overflow when subtracting
    /// duration from instant"; [`Instant::checked_sub`] returns `None` instead.
    fn sub(self, d: Duration) -> Instant {
        self.checked_sub(d)
            .expect("overflow when subtracting duration from instant")
    }
}

impl core::ops::SubAssign<Duration> for Instant {
    /// `*self = *self - d`.
    ///
    /// # Panics
    /// As `Instant - Duration`.
    fn sub_assign(&mut self, d: Duration) {
        *self = *self - d;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Readings at the limits of `Timespec`, which no clock gives but the type allows.
    fn extremes() -> [Instant; 5] {
        let at = |tv_sec, tv_nsec| Instant(Timespec { tv_sec, tv_nsec });
        [
            at(i64::MIN, 0),
            at(-1, 999_999_999),
            at(0, 0),
            at(1, 1),
            at(i64::MAX, 999_999_999),
        ]
    }

    #[test]
    fn arithmetic_at_the_limits_gives_none_or_saturates_never_panics() {
        let durations = [
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::from_secs(u64::MAX / 2),
            Duration::MAX,
        ];
        for a in extremes() {
            for b in extremes() {
                let d = a.checked_duration_since(b);
                assert_eq!(d.is_some(), a >= b, "{a:?} - {b:?}");
                assert_eq!(a - b, d.unwrap_or_default());
                if let Some(d) = d {
                    assert_eq!(b.checked_add(d), Some(a), "{b:?} + {d:?}");
                    assert_eq!(a.checked_sub(d), Some(b), "{a:?} - {d:?}");
                }
            }
            for d in durations {
                if let Some(later) = a.checked_add(d) {
                    assert_eq!(later.duration_since(a), d);
                }
                if let Some(earlier) = a.checked_sub(d) {
                    assert_eq!(a.duration_since(earlier), d);
                }
            }
        }
        let (first, last) = (extremes()[0], extremes()[4]);
        assert_eq!(last.checked_add(Duration::from_nanos(1)), None);
        assert_eq!(first.checked_sub(Duration::from_nanos(1)), None);
        // i64::MIN s + (u64::MAX s + 999_999_999 ns) is exactly the largest value.
        assert_eq!(first.checked_add(Duration::MAX), Some(last));
        assert_eq!(last.checked_sub(Duration::MAX), Some(first));
    }

    #[test]
    fn the_operators_agree_with_the_checked_methods() {
        for a in extremes() {
            for b in extremes() {
                assert_eq!(a - b, a.saturating_duration_since(b));
            }
            for d in [Duration::ZERO, Duration::from_nanos(1), Duration::MAX] {
                if let Some(later) = a.checked_add(d) {
                    assert_eq!(a + d, later);
                    let mut x = a;
                    x += d;
                    assert_eq!(x, later);
                }
                if let Some(earlier) = a.checked_sub(d) {
                    assert_eq!(a - d, earlier);
                    let mut x = a;
                    x -= d;
                    assert_eq!(x, earlier);
                }
            }
        }
    }
}
