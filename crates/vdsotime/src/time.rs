//! The kernel's time structures with `i64` seconds on every architecture, and their
//! conversions to `core::time::Duration` and `std::time::SystemTime`: each one that can
//! fail is a `TryFrom` with [`OutOfRange`], none panics or saturates.

use core::time::Duration;

const NANOS_PER_SEC: i64 = 1_000_000_000;
const MICROS_PER_SEC: i64 = 1_000_000;

/// A reading of a clock: `struct __kernel_timespec`, the layout the vDSO writes on every
/// architecture (64-bit seconds and nanoseconds even on 32-bit targets).
///
/// Ordering compares seconds, then nanoseconds.
///
/// ```
/// use core::time::Duration;
/// use vdsotime::Timespec;
/// let t = Timespec { tv_sec: 1, tv_nsec: 500_000_000 };
/// assert_eq!(Duration::try_from(t), Ok(Duration::from_millis(1500)));
/// assert_eq!(Timespec::try_from(Duration::from_millis(1500)), Ok(t));
/// assert!(Timespec::try_from(Duration::MAX).is_err()); // past i64::MAX seconds
/// assert_eq!(t.as_nanos(), 1_500_000_000);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Timespec {
    /// Seconds.
    pub tv_sec: i64,
    /// Nanoseconds, `0..1_000_000_000` in every value the kernel returns.
    pub tv_nsec: i64,
}

/// A `gettimeofday` reading, widened to `i64` fields on every architecture.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Timeval {
    /// Seconds since the epoch.
    pub tv_sec: i64,
    /// Microseconds, `0..1_000_000`.
    pub tv_usec: i64,
}

/// The kernel's `struct timezone` as `gettimeofday` fills it (set by `settimeofday`;
/// obsolete, but some programs still read it).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Timezone {
    /// Minutes west of Greenwich.
    pub tz_minuteswest: i32,
    /// Type of DST correction (always 0 on Linux in practice).
    pub tz_dsttime: i32,
}

/// The value was negative or out of range for the target type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfRange;

impl core::fmt::Display for OutOfRange {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("time value out of range")
    }
}

#[cfg(feature = "std")]
impl std::error::Error for OutOfRange {}

impl Timespec {
    /// Whether `tv_nsec` lies in `0..1_000_000_000`, as every kernel value does.
    ///
    /// # Example
    ///
    /// ```
    /// use vdsotime::Timespec;
    /// assert!(Timespec { tv_sec: 1, tv_nsec: 999_999_999 }.is_normalized());
    /// assert!(!Timespec { tv_sec: 1, tv_nsec: 1_000_000_000 }.is_normalized());
    /// ```
    pub const fn is_normalized(&self) -> bool {
        self.tv_nsec >= 0 && self.tv_nsec < NANOS_PER_SEC
    }

    /// Total nanoseconds (an `i128` cannot overflow).
    ///
    /// # Example
    ///
    /// ```
    /// let ts = vdsotime::Timespec { tv_sec: -1, tv_nsec: 500_000_000 };
    /// assert_eq!(ts.as_nanos(), -500_000_000);
    /// ```
    pub const fn as_nanos(&self) -> i128 {
        self.tv_sec as i128 * NANOS_PER_SEC as i128 + self.tv_nsec as i128
    }

    /// The same instant at microsecond resolution, truncated like the kernel's
    /// `gettimeofday`.
    ///
    /// # Example
    ///
    /// ```
    /// let ts = vdsotime::Timespec { tv_sec: 5, tv_nsec: 123_456_789 };
    /// assert_eq!(ts.to_timeval(), vdsotime::Timeval { tv_sec: 5, tv_usec: 123_456 });
    /// ```
    pub const fn to_timeval(self) -> Timeval {
        Timeval {
            tv_sec: self.tv_sec,
            tv_usec: self.tv_nsec / 1000,
        }
    }
}

impl Timeval {
    /// Whether `tv_usec` lies in `0..1_000_000`.
    ///
    /// # Example
    ///
    /// ```
    /// use vdsotime::Timeval;
    /// assert!(Timeval { tv_sec: 1, tv_usec: 999_999 }.is_normalized());
    /// assert!(!Timeval { tv_sec: 1, tv_usec: -1 }.is_normalized());
    /// ```
    pub const fn is_normalized(&self) -> bool {
        self.tv_usec >= 0 && self.tv_usec < MICROS_PER_SEC
    }

    /// Total microseconds.
    ///
    /// # Example
    ///
    /// ```
    /// let tv = vdsotime::Timeval { tv_sec: 2, tv_usec: 5 };
    /// assert_eq!(tv.as_micros(), 2_000_005);
    /// ```
    pub const fn as_micros(&self) -> i128 {
        self.tv_sec as i128 * MICROS_PER_SEC as i128 + self.tv_usec as i128
    }
}

impl TryFrom<Timespec> for Duration {
    type Error = OutOfRange;
    fn try_from(t: Timespec) -> Result<Duration, OutOfRange> {
        if t.tv_sec < 0 || !t.is_normalized() {
            return Err(OutOfRange);
        }
        Ok(Duration::new(t.tv_sec as u64, t.tv_nsec as u32))
    }
}

impl TryFrom<Timeval> for Duration {
    type Error = OutOfRange;
    fn try_from(t: Timeval) -> Result<Duration, OutOfRange> {
        if t.tv_sec < 0 || !t.is_normalized() {
            return Err(OutOfRange);
        }
        Ok(Duration::new(t.tv_sec as u64, (t.tv_usec * 1000) as u32))
    }
}

impl TryFrom<Duration> for Timespec {
    type Error = OutOfRange;
    /// Fails past `i64::MAX` seconds (292 billion years).
    fn try_from(d: Duration) -> Result<Timespec, OutOfRange> {
        Ok(Timespec {
            tv_sec: i64::try_from(d.as_secs()).map_err(|_| OutOfRange)?,
            tv_nsec: i64::from(d.subsec_nanos()),
        })
    }
}

impl TryFrom<Duration> for Timeval {
    type Error = OutOfRange;
    /// Truncates to microseconds; fails like `Timespec::try_from`.
    fn try_from(d: Duration) -> Result<Timeval, OutOfRange> {
        Timespec::try_from(d).map(Timespec::to_timeval)
    }
}

impl Timespec {
    /// The normalized value `nanos` nanoseconds from zero, if its seconds fit `i64`.
    pub(crate) fn from_nanos(nanos: i128) -> Result<Timespec, OutOfRange> {
        const NANOS: i128 = NANOS_PER_SEC as i128;
        Ok(Timespec {
            tv_sec: i64::try_from(nanos.div_euclid(NANOS)).map_err(|_| OutOfRange)?,
            tv_nsec: nanos.rem_euclid(NANOS) as i64, // in 0..10^9
        })
    }
}

#[cfg(feature = "std")]
impl TryFrom<Timespec> for std::time::SystemTime {
    type Error = OutOfRange;
    /// Interprets the value as time since the Unix epoch (a REALTIME or TAI reading).
    /// Fails for a value that is not normalized or that `SystemTime` cannot hold (on
    /// Linux it holds every normalized `Timespec`).
    fn try_from(t: Timespec) -> Result<std::time::SystemTime, OutOfRange> {
        if !t.is_normalized() {
            return Err(OutOfRange);
        }
        let epoch = std::time::UNIX_EPOCH;
        // -1.25 s is tv_sec -2, tv_nsec 750_000_000: whole seconds first, then the rest.
        let whole = Duration::from_secs(t.tv_sec.unsigned_abs());
        let seconds = if t.tv_sec >= 0 {
            epoch.checked_add(whole)
        } else {
            epoch.checked_sub(whole)
        };
        seconds
            .and_then(|s| s.checked_add(Duration::from_nanos(t.tv_nsec as u64)))
            .ok_or(OutOfRange)
    }
}

#[cfg(feature = "std")]
impl TryFrom<std::time::SystemTime> for Timespec {
    type Error = OutOfRange;
    /// Time since the Unix epoch, negative for earlier instants.
    fn try_from(t: std::time::SystemTime) -> Result<Timespec, OutOfRange> {
        let nanos = |d: Duration| i128::try_from(d.as_nanos()).map_err(|_| OutOfRange);
        let since = match t.duration_since(std::time::UNIX_EPOCH) {
            Ok(after) => nanos(after)?,
            Err(before) => nanos(before.duration())?.checked_neg().ok_or(OutOfRange)?,
        };
        Timespec::from_nanos(since)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duration_round_trip_and_rejection() {
        let t = Timespec {
            tv_sec: 3,
            tv_nsec: 7,
        };
        assert_eq!(Timespec::try_from(Duration::try_from(t).unwrap()), Ok(t));
        assert_eq!(
            Duration::try_from(Timespec {
                tv_sec: -1,
                tv_nsec: 0
            }),
            Err(OutOfRange)
        );
        assert_eq!(
            Duration::try_from(Timespec {
                tv_sec: 0,
                tv_nsec: NANOS_PER_SEC
            }),
            Err(OutOfRange)
        );
        assert_eq!(Timespec::try_from(Duration::MAX), Err(OutOfRange));
        assert_eq!(Timeval::try_from(Duration::MAX), Err(OutOfRange));
        let largest = Duration::new(i64::MAX as u64, 999_999_999);
        assert_eq!(
            Timespec::try_from(largest),
            Ok(Timespec {
                tv_sec: i64::MAX,
                tv_nsec: 999_999_999
            })
        );
        assert_eq!(
            Timeval::try_from(Duration::from_nanos(1_999)).map(|t| t.tv_usec),
            Ok(1)
        );
    }

    /// Seconds and nanoseconds at and around every limit, normalized or not.
    fn extremes() -> impl Iterator<Item = Timespec> {
        let secs = [i64::MIN, i64::MIN + 1, -2, -1, 0, 1, i64::MAX - 1, i64::MAX];
        let nsecs = [i64::MIN, -1, 0, 1, 999_999_999, 1_000_000_000, i64::MAX];
        secs.into_iter().flat_map(move |tv_sec| {
            nsecs
                .into_iter()
                .map(move |tv_nsec| Timespec { tv_sec, tv_nsec })
        })
    }

    /// Every other conversion and method over the same values: a value or `OutOfRange`,
    /// never a panic, and `Duration` round trips.
    #[test]
    fn duration_and_timeval_conversions_never_panic() {
        for t in extremes() {
            let _ = (t.as_nanos(), t.to_timeval().as_micros(), t.is_normalized());
            match Duration::try_from(t) {
                Ok(d) => assert_eq!(Timespec::try_from(d), Ok(t), "{t:?}"),
                Err(_) => assert!(t.tv_sec < 0 || !t.is_normalized(), "{t:?} refused"),
            }
            let tv = Timeval {
                tv_sec: t.tv_sec,
                tv_usec: t.tv_nsec,
            };
            if let Ok(d) = Duration::try_from(tv) {
                assert_eq!(Timeval::try_from(d), Ok(tv), "{tv:?}");
            }
            assert_eq!(
                Timespec::from_nanos(t.as_nanos()).is_ok(),
                t.tv_sec
                    .checked_add(t.tv_nsec.div_euclid(NANOS_PER_SEC))
                    .is_some(),
                "{t:?}"
            );
        }
        for d in [Duration::ZERO, Duration::MAX, Duration::new(u64::MAX, 0)] {
            let _ = (Timespec::try_from(d), Timeval::try_from(d));
        }
    }

    /// Issue 11: `{i64::MAX, -1}` made the conversion panic ("overflow when adding
    /// duration to instant"). Every value now converts or gives `OutOfRange`, and what
    /// converts comes back unchanged.
    #[cfg(feature = "std")]
    #[test]
    fn system_time_conversion_never_panics_and_round_trips() {
        for t in extremes() {
            match std::time::SystemTime::try_from(t) {
                Ok(st) => {
                    assert!(t.is_normalized(), "{t:?} accepted");
                    assert_eq!(Timespec::try_from(st), Ok(t), "{t:?} round trip");
                }
                Err(_) => assert!(!t.is_normalized(), "{t:?} refused"),
            }
        }
    }

    #[cfg(feature = "std")]
    #[test]
    fn system_time_round_trip_negative() {
        let t = Timespec {
            tv_sec: -2,
            tv_nsec: 750_000_000,
        };
        let st = std::time::SystemTime::try_from(t).unwrap();
        assert_eq!(Timespec::try_from(st), Ok(t));
        let t = Timespec {
            tv_sec: 1_700_000_000,
            tv_nsec: 1,
        };
        let st = std::time::SystemTime::try_from(t).unwrap();
        assert_eq!(Timespec::try_from(st), Ok(t));
    }
}
