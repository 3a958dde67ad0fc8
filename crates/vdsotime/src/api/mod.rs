//! The public calls: each is `#[inline]`, loads its entry from the table, makes one
//! indirect call and checks the result; everything else is `#[cold]` and out of line.
//!
//! Fallback rules, as glibc's: every clock id goes to the vDSO's `clock_gettime`, which
//! answers the clocks it can serve and makes the system call itself for the rest
//! (CPU-time, alarm, invalid and dynamic ids; auxiliary clocks before Linux 6.17), so a
//! call makes at most one system call and no per-call "is this clock served" test is
//! needed. An error is final: it is the kernel's own answer, whether the vDSO's
//! fallback or, without a vDSO, our syscall made the call. (Where an architecture's old
//! vDSOs answered `ENOSYS` without asking the kernel, the table binds a shim that asks
//! it: see [`crate::arch::ArchTable::enosys_means_unserved`].)

mod calls;
mod init;
mod through_pointer;

pub use calls::{
    clock_getres, clock_gettime, current_cpu, getcpu, gettimeofday, gettimeofday_tz, time,
};
pub use init::{init, init_from_auxv, init_from_image};
pub use through_pointer::{clock_getres_to, clock_gettime_to, gettimeofday_to, time_to};

use crate::Errno;

/// The error: a nonzero result is `-errno` from the kernel. Anything else (no kernel
/// returns it) is taken as the clock being refused, so a result that was never written
/// is never read. Inline, so a C caller sets `errno` with one call on the error path; the
/// call to [`not_an_errno`] keeps the compiler from computing all this, branch-free, on
/// the success path as well (it did, four instructions per call, when this was a select).
#[inline(always)]
fn failed(ret: i32) -> Errno {
    match Errno::from_ret(ret as isize) {
        Some(e) => e,
        None => not_an_errno(),
    }
}

/// A nonzero result that is not `-errno`.
#[cold]
#[inline(never)]
fn not_an_errno() -> Errno {
    Errno::EINVAL
}
