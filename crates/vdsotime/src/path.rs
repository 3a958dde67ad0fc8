//! Which path each public function takes in this process: [`path`], and the [`Function`]
//! and [`Path`] values it speaks in.

use crate::table;
use crate::ClockId;
use core::fmt;

/// A function of this crate, for [`path`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Function {
    /// [`crate::clock_gettime`] of a clock.
    ClockGettime(ClockId),
    /// [`crate::clock_getres`] of a clock.
    ClockGetres(ClockId),
    /// [`crate::gettimeofday`].
    Gettimeofday,
    /// [`crate::time`].
    Time,
    /// [`crate::getcpu`].
    Getcpu,
    /// [`crate::getrandom`].
    Getrandom,
}

/// How a function is served in this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Path {
    /// By this vDSO symbol (the vDSO itself may still enter the kernel for a clock
    /// its clocksource cannot read from user space: see `vdsotime doctor`).
    Vdso {
        /// Symbol name.
        symbol: &'static str,
        /// Its version, if the image has versions.
        version: Option<&'static str>,
    },
    /// By the vDSO's `clock_gettime(CLOCK_REALTIME_COARSE)` (`time` where the vDSO
    /// has no usable `time` symbol).
    VdsoCoarse {
        /// The `clock_gettime` symbol name.
        symbol: &'static str,
        /// Its version, if the image has versions.
        version: Option<&'static str>,
    },
    /// By the system call.
    Syscall,
    /// From the calling thread's rseq area, which glibc registered and the kernel keeps
    /// current (`getcpu`: see [`crate::rseq`]).
    Rseq,
}

impl Path {
    /// Whether the call is answered in user space (by the vDSO or the rseq area).
    ///
    /// # Example
    ///
    /// ```
    /// use vdsotime::{path, ClockId, Function, Path};
    /// assert!(!Path::Syscall.is_vdso());
    /// // A CPU-time clock always ends in the kernel, whatever its entry point.
    /// assert!(!path(Function::ClockGettime(ClockId::PROCESS_CPUTIME_ID)).is_vdso());
    /// ```
    pub const fn is_vdso(&self) -> bool {
        !matches!(self, Path::Syscall)
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (symbol, version, coarse) = match *self {
            Path::Syscall => return f.write_str("syscall"),
            Path::Rseq => return f.write_str("rseq area (glibc)"),
            Path::Vdso { symbol, version } => (symbol, version, ""),
            Path::VdsoCoarse { symbol, version } => (symbol, version, " (CLOCK_REALTIME_COARSE)"),
        };
        f.write_str(symbol)?;
        if let Some(v) = version {
            write!(f, "@{v}")?;
        }
        f.write_str(coarse)
    }
}

/// Which path `function` takes in this process: the vDSO symbol, the rseq area, or the
/// system call. The answer is worked out afresh from the vDSO as it is now, by the rules
/// a first call binds by, so it is what a call bound now takes.
///
/// Each answer confirms that the vDSO is still mapped, with one system call, as a first
/// call does: in a program that enters a seccomp sandbox, ask before entering it.
///
/// # Fallback
///
/// Where the vDSO cannot be used, the answer is [`Path::Syscall`],
/// as the calls themselves do.
///
/// # Errors
///
/// None: it always answers.
///
/// # Example
///
/// ```
/// use vdsotime::{path, ClockId, Function, Path};
/// assert_eq!(path(Function::ClockGettime(ClockId::PROCESS_CPUTIME_ID)), Path::Syscall);
/// if vdsotime::vdso().is_some() {
///     assert!(path(Function::ClockGettime(ClockId::MONOTONIC)).is_vdso());
/// }
/// ```
pub fn path(function: Function) -> Path {
    use table::Slot;
    match function {
        Function::ClockGettime(c) => table::clock_path(c, table::path(Slot::ClockGettime)),
        Function::ClockGetres(c) if c.is_aux() => Path::Syscall,
        Function::ClockGetres(c) => table::clock_path(c, table::path(Slot::ClockGetres)),
        Function::Gettimeofday => table::path(Slot::Gettimeofday),
        Function::Time => table::path(Slot::Time),
        Function::Getcpu => match crate::rseq::area() {
            crate::RseqArea::Glibc { node: true, .. } => Path::Rseq,
            _ => table::path(Slot::Getcpu),
        },
        Function::Getrandom => crate::random::path(),
    }
}
