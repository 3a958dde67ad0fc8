//! Fault injection for `check`: wraps the library's readings and breaks them on
//! purpose, so a test can prove `check` catches a broken path. Off unless the
//! `VDSOTIME_FAULT` variable or the hidden `--fault` option names a fault.
//!
//! Faults, comma-separated:
//! `shift-<clock>-ns:N` adds N ns to clock_gettime(clock);
//! `denorm-<clock>` returns the same instant with tv_nsec >= 1e9;
//! `shift-gettimeofday-us:N`, `shift-time-s:N`; `getres-<clock>-ns:N`;
//! `getcpu-plus:N` reports the CPU number plus N; `accept-invalid` returns 0 for
//! clock ids the kernel rejects.

use vdsotime::{ClockId, Errno, Timespec, Timeval, Timezone};

use crate::names;

/// Name of the environment variable.
pub const ENV: &str = "VDSOTIME_FAULT";

/// One injected fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Shift clock_gettime of a clock.
    Shift(ClockId, i64),
    /// Return an equal but non-normalized timespec.
    Denorm(ClockId),
    /// Shift gettimeofday by microseconds.
    ShiftTimeofday(i64),
    /// Shift time() by seconds.
    ShiftTime(i64),
    /// Shift clock_getres of a clock.
    Getres(ClockId, i64),
    /// Add to the CPU number.
    GetcpuPlus(u32),
    /// Succeed where the kernel says EINVAL.
    AcceptInvalid,
}

fn num<T: std::str::FromStr>(s: &str, spec: &str) -> Result<T, String> {
    s.parse()
        .map_err(|_| format!("fault {spec:?}: {s:?} is not a number"))
}

fn clock(s: &str, spec: &str) -> Result<ClockId, String> {
    names::parse_clock(s).ok_or_else(|| format!("fault {spec:?}: unknown clock {s:?}"))
}

/// Parses a comma-separated fault list.
pub fn parse(list: &str) -> Result<Vec<Fault>, String> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|spec| {
            let (name, arg) = spec.split_once(':').unwrap_or((spec, ""));
            if let Some(c) = name.strip_prefix("denorm-") {
                return Ok(Fault::Denorm(clock(c, spec)?));
            }
            if let Some(c) = name
                .strip_prefix("getres-")
                .and_then(|r| r.strip_suffix("-ns"))
            {
                return Ok(Fault::Getres(clock(c, spec)?, num(arg, spec)?));
            }
            match name {
                "shift-gettimeofday-us" => return Ok(Fault::ShiftTimeofday(num(arg, spec)?)),
                "shift-time-s" => return Ok(Fault::ShiftTime(num(arg, spec)?)),
                "getcpu-plus" => return Ok(Fault::GetcpuPlus(num(arg, spec)?)),
                "accept-invalid" => return Ok(Fault::AcceptInvalid),
                _ => {}
            }
            if let Some(c) = name
                .strip_prefix("shift-")
                .and_then(|r| r.strip_suffix("-ns"))
            {
                return Ok(Fault::Shift(clock(c, spec)?, num(arg, spec)?));
            }
            Err(format!("unknown fault {spec:?}"))
        })
        .collect()
}

fn shift(t: Timespec, ns: i64) -> Timespec {
    let total = i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec) + i128::from(ns);
    Timespec {
        tv_sec: i64::try_from(total.div_euclid(1_000_000_000)).unwrap_or(i64::MAX),
        tv_nsec: i64::try_from(total.rem_euclid(1_000_000_000)).unwrap_or(0),
    }
}

/// The library as `check` sees it: vdsotime's fast path with faults applied.
#[derive(Clone, Debug, Default)]
pub struct Lib {
    faults: Vec<Fault>,
}

impl Lib {
    /// The library with these faults.
    pub fn new(faults: Vec<Fault>) -> Lib {
        Lib { faults }
    }

    /// Whether any fault is injected.
    pub fn faulty(&self) -> bool {
        !self.faults.is_empty()
    }

    fn invalid_ok(&self, r: Result<Timespec, Errno>) -> Result<Timespec, Errno> {
        match r {
            Err(e) if e == Errno::EINVAL && self.faults.contains(&Fault::AcceptInvalid) => {
                Ok(Timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                })
            }
            r => r,
        }
    }

    /// vdsotime::clock_gettime, faulted.
    pub fn clock_gettime(&self, c: ClockId) -> Result<Timespec, Errno> {
        let mut r = self.invalid_ok(vdsotime::clock_gettime(c));
        if let Ok(t) = &mut r {
            for f in &self.faults {
                match *f {
                    Fault::Shift(fc, ns) if fc == c => *t = shift(*t, ns),
                    Fault::Denorm(fc) if fc == c => {
                        *t = Timespec {
                            tv_sec: t.tv_sec - 1,
                            tv_nsec: t.tv_nsec + 1_000_000_000,
                        }
                    }
                    _ => {}
                }
            }
        }
        r
    }

    /// vdsotime::clock_getres, faulted.
    pub fn clock_getres(&self, c: ClockId) -> Result<Timespec, Errno> {
        let mut r = self.invalid_ok(vdsotime::clock_getres(c));
        if let Ok(t) = &mut r {
            for f in &self.faults {
                if let Fault::Getres(fc, ns) = *f {
                    if fc == c {
                        *t = shift(*t, ns);
                    }
                }
            }
        }
        r
    }

    /// vdsotime::gettimeofday_tz, faulted.
    pub fn gettimeofday_tz(&self) -> Result<(Timeval, Timezone), Errno> {
        let mut r = vdsotime::gettimeofday_tz();
        if let Ok((tv, _)) = &mut r {
            for f in &self.faults {
                if let Fault::ShiftTimeofday(us) = *f {
                    let total = tv.tv_sec * 1_000_000 + tv.tv_usec + us;
                    *tv = Timeval {
                        tv_sec: total.div_euclid(1_000_000),
                        tv_usec: total.rem_euclid(1_000_000),
                    };
                }
            }
        }
        r
    }

    /// vdsotime::time, faulted.
    pub fn time(&self) -> i64 {
        let t = vdsotime::time();
        self.faults.iter().fold(t, |t, f| match *f {
            Fault::ShiftTime(s) => t + s,
            _ => t,
        })
    }

    /// vdsotime::getcpu, faulted.
    pub fn getcpu(&self) -> Result<(u32, u32), Errno> {
        vdsotime::getcpu().map(|(cpu, node)| {
            let plus = self.faults.iter().fold(0, |a, f| match *f {
                Fault::GetcpuPlus(n) => a + n,
                _ => a,
            });
            (cpu + plus, node)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_fault() {
        let v = parse("shift-realtime-ns:1000, denorm-monotonic,shift-gettimeofday-us:-5,shift-time-s:2,getres-monotonic-coarse-ns:1,getcpu-plus:1,accept-invalid").unwrap();
        assert_eq!(
            v,
            vec![
                Fault::Shift(ClockId::REALTIME, 1000),
                Fault::Denorm(ClockId::MONOTONIC),
                Fault::ShiftTimeofday(-5),
                Fault::ShiftTime(2),
                Fault::Getres(ClockId::MONOTONIC_COARSE, 1),
                Fault::GetcpuPlus(1),
                Fault::AcceptInvalid,
            ]
        );
        assert!(parse("shift-nope-ns:1").is_err());
        assert!(parse("shift-realtime-ns:x").is_err());
        assert!(parse("explode").is_err());
        assert_eq!(parse("").unwrap(), vec![]);
    }

    #[test]
    fn shift_keeps_normalized() {
        let t = Timespec {
            tv_sec: 5,
            tv_nsec: 999_999_500,
        };
        assert_eq!(
            shift(t, 1000),
            Timespec {
                tv_sec: 6,
                tv_nsec: 500
            }
        );
        assert_eq!(
            shift(t, -999_999_501),
            Timespec {
                tv_sec: 4,
                tv_nsec: 999_999_999
            }
        );
    }

    #[test]
    fn faults_change_readings() {
        let lib = Lib::new(vec![
            Fault::Denorm(ClockId::MONOTONIC),
            Fault::AcceptInvalid,
        ]);
        let t = lib.clock_gettime(ClockId::MONOTONIC).unwrap();
        assert!(t.tv_nsec >= 1_000_000_000);
        assert!(lib.clock_gettime(ClockId::from_raw(1000)).is_ok());
        assert!(Lib::default()
            .clock_gettime(ClockId::from_raw(1000))
            .is_err());
    }
}
