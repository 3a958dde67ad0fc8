//! The kernel's time structures with `i64` seconds on every architecture, and their
//! conversions to `core::time::Duration` and `std::time::SystemTime`.

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
/// assert_eq!(Timespec::from(Duration::from_millis(1500)), t);
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
    pub const fn is_normalized(&self) -> bool {
        self.tv_nsec >= 0 && self.tv_nsec < NANOS_PER_SEC
    }

    /// Total nanoseconds (an `i128` cannot overflow).
    pub const fn as_nanos(&self) -> i128 {
        self.tv_sec as i128 * NANOS_PER_SEC as i128 + self.tv_nsec as i128
    }

    /// The same instant at microsecond resolution, truncated like the kernel's
    /// `gettimeofday`.
    pub const fn to_timeval(self) -> Timeval {
        Timeval {
            tv_sec: self.tv_sec,
            tv_usec: self.tv_nsec / 1000,
        }
    }
}

impl Timeval {
    /// Whether `tv_usec` lies in `0..1_000_000`.
    pub const fn is_normalized(&self) -> bool {
        self.tv_usec >= 0 && self.tv_usec < MICROS_PER_SEC
    }

    /// Total microseconds.
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

impl From<Duration> for Timespec {
    /// Saturates at `i64::MAX` seconds (292 billion years).
    fn from(d: Duration) -> Timespec {
        match i64::try_from(d.as_secs()) {
            Ok(sec) => Timespec {
                tv_sec: sec,
                tv_nsec: i64::from(d.subsec_nanos()),
            },
            Err(_) => Timespec {
                tv_sec: i64::MAX,
                tv_nsec: NANOS_PER_SEC - 1,
            },
        }
    }
}

impl From<Duration> for Timeval {
    /// Truncates to microseconds; saturates like `Timespec::from`.
    fn from(d: Duration) -> Timeval {
        Timespec::from(d).to_timeval()
    }
}

#[cfg(feature = "std")]
impl From<Timespec> for std::time::SystemTime {
    /// Interprets the value as time since the Unix epoch (a REALTIME or TAI reading).
    fn from(t: Timespec) -> std::time::SystemTime {
        let epoch = std::time::UNIX_EPOCH;
        let magnitude = |sec: u64, nsec: u32| Duration::new(sec, nsec);
        if t.tv_sec >= 0 {
            epoch + magnitude(t.tv_sec as u64, t.tv_nsec as u32)
        } else {
            // -1.25 s is tv_sec -2, tv_nsec 750_000_000.
            let whole = magnitude(t.tv_sec.unsigned_abs(), 0);
            epoch - whole + magnitude(0, t.tv_nsec as u32)
        }
    }
}

#[cfg(feature = "std")]
impl TryFrom<std::time::SystemTime> for Timespec {
    type Error = OutOfRange;
    /// Time since the Unix epoch, negative for earlier instants.
    fn try_from(t: std::time::SystemTime) -> Result<Timespec, OutOfRange> {
        match t.duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => Ok(Timespec::from(d)),
            Err(before) => {
                let d = before.duration();
                let sec = i64::try_from(d.as_secs()).map_err(|_| OutOfRange)?;
                let nsec = i64::from(d.subsec_nanos());
                Ok(if nsec == 0 {
                    Timespec {
                        tv_sec: -sec,
                        tv_nsec: 0,
                    }
                } else {
                    Timespec {
                        tv_sec: -sec - 1,
                        tv_nsec: NANOS_PER_SEC - nsec,
                    }
                })
            }
        }
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
        assert_eq!(Timespec::from(Duration::try_from(t).unwrap()), t);
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
        assert_eq!(Timespec::from(Duration::MAX).tv_sec, i64::MAX);
        assert_eq!(Timeval::from(Duration::from_nanos(1_999)).tv_usec, 1);
    }

    #[cfg(feature = "std")]
    #[test]
    fn system_time_round_trip_negative() {
        let t = Timespec {
            tv_sec: -2,
            tv_nsec: 750_000_000,
        };
        let st = std::time::SystemTime::from(t);
        assert_eq!(Timespec::try_from(st), Ok(t));
        let t = Timespec {
            tv_sec: 1_700_000_000,
            tv_nsec: 1,
        };
        assert_eq!(Timespec::try_from(std::time::SystemTime::from(t)), Ok(t));
    }
}
