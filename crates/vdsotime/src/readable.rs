//! Whether memory can be read, asked of the kernel before a byte of it is touched.
//!
//! The vDSO's address comes from the auxiliary vector or a caller, and the process may
//! have unmapped the mapping or made it `PROT_NONE` since: a plain read would then die
//! of `SIGSEGV`. The kernel reads user memory for us in `rt_sigprocmask`: given a signal
//! set to read and a `how` that is none of `SIG_BLOCK`, `SIG_UNBLOCK` and `SIG_SETMASK`,
//! it copies the set in first (`EFAULT` if any byte of it cannot be read), then refuses
//! the `how` (`EINVAL`) without changing the mask. One system call proves one page
//! readable; it is in every seccomp allowlist that lets a C library block signals.

use crate::sys::{nr, syscall};
use crate::Errno;
use linux_raw_sys::errno::{EFAULT, EINVAL, ENOSYS, EPERM};

/// The kernel's `sigset_t`, what `rt_sigprocmask` reads: 128 signals on MIPS, 64 elsewhere.
const SIGSET: usize = if cfg!(any(target_arch = "mips", target_arch = "mips64")) {
    16
} else {
    8
};
/// The smallest Linux page: one probe per this many bytes proves a range readable.
const PAGE: usize = 4096;
/// A `how` that `rt_sigprocmask` refuses, after it read the set.
const NO_HOW: usize = 0x7fff_ffff;

/// Whether every page of `[addr, addr + len)` can be read: one `rt_sigprocmask` at
/// `addr`, then one at each 4 KiB boundary inside the range.
///
/// Only `EINVAL` (the set was read) says so; `EFAULT` (a page is unmapped or unreadable)
/// and any other answer say no. The one exception is a kernel or sandbox that refuses the
/// call itself (`ENOSYS`, `EPERM`): that answer does not depend on the range, which then
/// is trusted as it came, from the kernel's auxiliary vector or a caller that vouches for
/// it.
pub(crate) fn readable(addr: usize, len: usize) -> bool {
    let Some(end) = addr.checked_add(len) else {
        return false;
    };
    let mut at = addr;
    while at < end {
        if !probe(at) {
            return false;
        }
        at = match (at & !(PAGE - 1)).checked_add(PAGE) {
            Some(next) => next,
            None => break,
        };
    }
    true
}

/// Whether the `SIGSET` bytes at `at` can be read (see [`readable`]).
fn probe(at: usize) -> bool {
    // SAFETY: with a `how` the kernel refuses and no old set, rt_sigprocmask only copies
    // `SIGSET` bytes from `at` (or finds it cannot) and changes nothing: it writes no
    // memory of the process and leaves the signal mask as it was.
    let ret = unsafe { syscall(nr::__NR_rt_sigprocmask, NO_HOW, at, 0, SIGSET, 0) };
    match Errno::from_ret(ret).map(|e| e.raw() as u32) {
        Some(EINVAL) => true,
        Some(EFAULT) => false,
        Some(ENOSYS | EPERM) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This thread's signal mask.
    fn mask() -> [u64; 2] {
        let mut mask = [0u64; 2];
        // SAFETY: writes the current mask (`SIGSET` bytes) into `mask`.
        let ret = unsafe {
            syscall(
                nr::__NR_rt_sigprocmask,
                0,
                0,
                mask.as_mut_ptr() as usize,
                SIGSET,
                0,
            )
        };
        assert_eq!(ret, 0);
        mask
    }

    #[test]
    fn unmapped_and_prot_none_pages_are_not_readable() {
        let before = mask();
        assert!(!readable(0, PAGE), "the zero page is never mapped");
        assert!(
            !readable(usize::MAX & !(PAGE - 1), PAGE),
            "past the address space"
        );
        assert!(!readable(usize::MAX - 3, 8), "a range that wraps");
        let own = [0u8; 64];
        assert!(readable(own.as_ptr() as usize, own.len()), "this stack");

        // mprotect works in the system's pages: 64 KiB on some powerpc64 and aarch64
        // kernels (AT_PAGESZ).
        let page = crate::auxv::lookup(crate::auxv::AT_PAGESZ).unwrap_or(PAGE);
        let layout = std::alloc::Layout::from_size_align(2 * page, page).unwrap();
        // SAFETY: a non-zero size.
        let map = unsafe { std::alloc::alloc(layout) } as usize;
        assert_ne!(map, 0);
        assert!(readable(map, 2 * page));
        // SAFETY: the second page of our own allocation made unreadable, then readable
        // again before it is freed.
        let protect = |prot| unsafe { syscall(nr::__NR_mprotect, map + page, page, prot, 0, 0) };
        assert_eq!(protect(0), 0);
        let (first, both, second) = (
            readable(map, page),
            readable(map, 2 * page),
            readable(map + page, 8),
        );
        assert_eq!(protect(3), 0); // PROT_READ | PROT_WRITE
                                   // SAFETY: allocated above with `layout`.
        unsafe { std::alloc::dealloc(map as *mut u8, layout) };
        assert!(first, "the first page still is");
        assert!(!both, "a range with a PROT_NONE page is not");
        assert!(!second, "the PROT_NONE page is not");
        assert_eq!(before, mask(), "the probes left the signal mask alone");
    }
}
