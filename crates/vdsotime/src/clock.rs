//! `ClockId`: which clock to read, including the kernel's dynamic ids.

use core::fmt;

/// A clock id as the kernel understands it (`clockid_t`).
///
/// The eleven named clocks are constants; any other `i32` can be wrapped with
/// [`ClockId::from_raw`] and gets exactly the kernel's answer (`EINVAL` for ids it
/// does not know). Negative ids name the CPU-time clock of a process or thread, or a
/// dynamic clock behind a file descriptor (PTP devices): see the constructors.
///
/// ```
/// use vdsotime::ClockId;
/// assert_eq!(ClockId::MONOTONIC.as_raw(), 1);
/// assert_eq!(ClockId::MONOTONIC.name(), Some("CLOCK_MONOTONIC"));
/// assert_eq!(ClockId::from_raw(12).name(), None);
/// assert!(ClockId::process_cputime(0).as_raw() < 0);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClockId(i32);

/// Bit `id` is set for the clocks the kernel's vDSO answers without a syscall. For the
/// CPU-time clocks (2, 3), the alarm clocks (8, 9), the removed SGI clock (10) and every
/// other id (auxiliary clocks aside) its fallback makes the syscall: `path` says so.
const VDSO_SERVED: u32 = 1 << 0 | 1 << 1 | 1 << 4 | 1 << 5 | 1 << 6 | 1 << 7 | 1 << 11;

/// The kernel's `CLOCK_AUX`: the first auxiliary clock id.
const CLOCK_AUX: i32 = 16;
/// The kernel's `MAX_AUX_CLOCKS`.
const MAX_AUX_CLOCKS: i32 = 8;

/// The kernel's `CPUCLOCK_SCHED`: CPU time as the scheduler accounts it.
const CPUCLOCK_SCHED: i32 = 2;
/// The kernel's `CPUCLOCK_PERTHREAD_MASK`.
const CPUCLOCK_PERTHREAD: i32 = 4;
/// The kernel's `CLOCKFD`.
const CLOCKFD: i32 = 3;

impl ClockId {
    /// Wall-clock time, settable, subject to leaps and NTP slewing.
    pub const REALTIME: ClockId = ClockId(0);
    /// Time since boot, excluding suspend; never goes backwards.
    pub const MONOTONIC: ClockId = ClockId(1);
    /// CPU time consumed by the calling process (always a syscall).
    pub const PROCESS_CPUTIME_ID: ClockId = ClockId(2);
    /// CPU time consumed by the calling thread (always a syscall).
    pub const THREAD_CPUTIME_ID: ClockId = ClockId(3);
    /// MONOTONIC without NTP frequency adjustment.
    pub const MONOTONIC_RAW: ClockId = ClockId(4);
    /// REALTIME at tick resolution, cheaper.
    pub const REALTIME_COARSE: ClockId = ClockId(5);
    /// MONOTONIC at tick resolution, cheaper.
    pub const MONOTONIC_COARSE: ClockId = ClockId(6);
    /// MONOTONIC including time spent in suspend.
    pub const BOOTTIME: ClockId = ClockId(7);
    /// REALTIME for alarm timers (reading it is a syscall).
    pub const REALTIME_ALARM: ClockId = ClockId(8);
    /// BOOTTIME for alarm timers (reading it is a syscall).
    pub const BOOTTIME_ALARM: ClockId = ClockId(9);
    /// International Atomic Time: REALTIME plus the kernel's TAI offset.
    pub const TAI: ClockId = ClockId(11);

    /// The eleven named clocks, in id order.
    pub const ALL: [ClockId; 11] = [
        Self::REALTIME,
        Self::MONOTONIC,
        Self::PROCESS_CPUTIME_ID,
        Self::THREAD_CPUTIME_ID,
        Self::MONOTONIC_RAW,
        Self::REALTIME_COARSE,
        Self::MONOTONIC_COARSE,
        Self::BOOTTIME,
        Self::REALTIME_ALARM,
        Self::BOOTTIME_ALARM,
        Self::TAI,
    ];

    /// Wraps any raw id; an id the kernel does not know gives `EINVAL` when read.
    ///
    /// # Example
    ///
    /// ```
    /// use vdsotime::{ClockId, Errno};
    /// assert_eq!(ClockId::from_raw(1), ClockId::MONOTONIC);
    /// assert_eq!(vdsotime::clock_gettime(ClockId::from_raw(12)), Err(Errno::EINVAL));
    /// ```
    pub const fn from_raw(id: i32) -> ClockId {
        ClockId(id)
    }

    /// The raw `clockid_t`.
    ///
    /// # Example
    ///
    /// ```
    /// assert_eq!(vdsotime::ClockId::MONOTONIC.as_raw(), 1);
    /// ```
    pub const fn as_raw(self) -> i32 {
        self.0
    }

    /// The CPU-time clock of process `pid` (0: the caller), as `clock_getcpuclockid` builds it.
    ///
    /// # Example
    ///
    /// ```
    /// use vdsotime::ClockId;
    /// // 0 is the calling process: the same clock as CLOCK_PROCESS_CPUTIME_ID.
    /// let mine = vdsotime::clock_gettime(ClockId::process_cputime(0)).unwrap();
    /// assert!(mine.is_normalized());
    /// ```
    pub const fn process_cputime(pid: i32) -> ClockId {
        ClockId((!pid).wrapping_shl(3) | CPUCLOCK_SCHED)
    }

    /// The CPU-time clock of thread `tid` (0: the caller), as `pthread_getcpuclockid` builds it.
    ///
    /// # Example
    ///
    /// ```
    /// use vdsotime::ClockId;
    /// let t = vdsotime::clock_gettime(ClockId::thread_cputime(0)).unwrap();
    /// assert!(t.is_normalized());
    /// ```
    pub const fn thread_cputime(tid: i32) -> ClockId {
        ClockId((!tid).wrapping_shl(3) | CPUCLOCK_SCHED | CPUCLOCK_PERTHREAD)
    }

    /// The dynamic clock behind an open file descriptor (e.g. `/dev/ptp0`).
    ///
    /// # Example
    ///
    /// ```
    /// use vdsotime::{ClockId, Errno};
    /// // Descriptor 0 is no clock: the kernel says so.
    /// assert_eq!(vdsotime::clock_gettime(ClockId::from_fd(0)), Err(Errno::EINVAL));
    /// ```
    pub const fn from_fd(fd: i32) -> ClockId {
        ClockId((!fd).wrapping_shl(3) | CLOCKFD)
    }

    /// Auxiliary clock `n` (`CLOCK_AUX + n`, Linux 6.17+; `n` below 8): an independent
    /// clock a privileged process steers (e.g. for PTP), enabled per time namespace in
    /// sysfs. Where it is not enabled, or the kernel predates it, reading it gives `EINVAL`.
    ///
    /// ```
    /// use vdsotime::{ClockId, Errno};
    /// let aux = ClockId::aux(0);
    /// assert_eq!(aux.as_raw(), 16);
    /// // Enabled or not, the library and the kernel agree.
    /// assert_eq!(vdsotime::clock_getres(aux), vdsotime::syscall::clock_getres(aux));
    /// ```
    pub const fn aux(n: u8) -> ClockId {
        ClockId(CLOCK_AUX + n as i32)
    }

    /// Whether this is one of the auxiliary clocks (ids 16–23).
    ///
    /// # Example
    ///
    /// ```
    /// use vdsotime::ClockId;
    /// assert!(ClockId::aux(7).is_aux());
    /// assert!(!ClockId::MONOTONIC.is_aux());
    /// ```
    pub const fn is_aux(self) -> bool {
        self.0 >= CLOCK_AUX && self.0 < CLOCK_AUX + MAX_AUX_CLOCKS
    }

    /// Whether the vDSO can answer this clock without entering the kernel.
    #[inline(always)]
    pub(crate) const fn vdso_served(self) -> bool {
        (self.0 as u32) < 32 && VDSO_SERVED & (1 << self.0 as u32) != 0
    }

    /// The C name (`"CLOCK_MONOTONIC"`), or `None` for ids without one.
    ///
    /// # Example
    ///
    /// ```
    /// use vdsotime::ClockId;
    /// assert_eq!(ClockId::BOOTTIME.name(), Some("CLOCK_BOOTTIME"));
    /// assert_eq!(ClockId::from_raw(12).name(), None);
    /// ```
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0 => "CLOCK_REALTIME",
            1 => "CLOCK_MONOTONIC",
            2 => "CLOCK_PROCESS_CPUTIME_ID",
            3 => "CLOCK_THREAD_CPUTIME_ID",
            4 => "CLOCK_MONOTONIC_RAW",
            5 => "CLOCK_REALTIME_COARSE",
            6 => "CLOCK_MONOTONIC_COARSE",
            7 => "CLOCK_BOOTTIME",
            8 => "CLOCK_REALTIME_ALARM",
            9 => "CLOCK_BOOTTIME_ALARM",
            11 => "CLOCK_TAI",
            _ => return None,
        })
    }
}

impl fmt::Debug for ClockId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "ClockId({})", self.0),
        }
    }
}

impl fmt::Display for ClockId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl From<ClockId> for i32 {
    fn from(id: ClockId) -> i32 {
        id.0
    }
}
