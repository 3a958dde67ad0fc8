//! Memory for states: whole pages mapped with exactly the protection and flags the
//! kernel asked for (`MAP_DROPPABLE`: the kernel may zero the pages under memory
//! pressure and a forked child gets them zeroed; the vDSO notices either by its
//! generation counter and rekeys). Raw `mmap`/`munmap` system calls, never the heap,
//! so this works without `std` and inside signal handlers.

use crate::random::entry::Params;
use crate::Errno;

/// Maps one page for states.
#[cfg(target_pointer_width = "64")]
pub(crate) fn map_page(p: &Params) -> Result<usize, Errno> {
    let args = [
        0,
        p.page_size,
        p.mmap_prot as usize,
        p.mmap_flags as usize,
        -1isize as usize,
        0,
    ];
    // SAFETY: an anonymous mapping at an address of the kernel's choosing touches no
    // existing memory; fd -1 and offset 0 as anonymous mappings want.
    let ret = unsafe { mmap(&args) };
    match Errno::from_ret(ret) {
        Some(e) => Err(e),
        None => Ok(ret as usize),
    }
}

/// The `mmap` system call with (addr, len, prot, flags, fd, offset).
///
/// # Safety
/// As for `mmap`: the arguments must not replace memory anything still uses.
#[cfg(all(target_pointer_width = "64", not(target_arch = "s390x")))]
unsafe fn mmap(a: &[usize; 6]) -> isize {
    // SAFETY: forwarded from the caller.
    unsafe {
        crate::sys::syscall6(
            crate::sys::nr::__NR_mmap,
            a[0],
            a[1],
            a[2],
            a[3],
            a[4],
            a[5],
        )
    }
}

/// s390x's `mmap` is the old one (`old_mmap`, arch/s390/kernel/syscall.c): its one
/// argument points to the six (glibc's s390 `MMAP_CALL` does the same). Passed in
/// registers, the address 0 is read as that pointer: `EFAULT`, and no state is ever
/// mapped.
///
/// # Safety
/// As for `mmap`.
#[cfg(target_arch = "s390x")]
unsafe fn mmap(a: &[usize; 6]) -> isize {
    // SAFETY: `a` is six readable words for the duration of the call (the asm is not
    // `nomem`, so they are in memory when the kernel reads them); the rest is the
    // caller's.
    unsafe { crate::sys::syscall(crate::sys::nr::__NR_mmap, a.as_ptr() as usize, 0, 0, 0, 0) }
}

/// 32-bit targets never map states (the system call serves them).
#[cfg(target_pointer_width = "32")]
pub(crate) fn map_page(_: &Params) -> Result<usize, Errno> {
    Err(Errno::ENOSYS)
}

/// Unmaps a page [`map_page`] returned.
///
/// # Safety
/// Nothing may use the page afterwards.
pub(crate) unsafe fn unmap_page(addr: usize, page_size: usize) {
    // SAFETY: the caller owns the mapping and gives it up.
    unsafe { crate::sys::syscall(crate::sys::nr::__NR_munmap, addr, page_size, 0, 0, 0) };
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    use super::*;

    /// A page mapped the way states are, with ordinary anonymous flags so that it works
    /// on every kernel: writable, and given back. (On s390x the register-passed `mmap`
    /// failed with `EFAULT` here, so no vDSO getrandom state was ever mapped there.)
    #[test]
    fn a_page_is_mapped_written_and_unmapped() {
        let prot = linux_raw_sys::general::PROT_READ | linux_raw_sys::general::PROT_WRITE;
        let flags = linux_raw_sys::general::MAP_PRIVATE | linux_raw_sys::general::MAP_ANONYMOUS;
        let page_size = crate::auxv::lookup(crate::auxv::AT_PAGESZ).unwrap_or(4096);
        let p = Params {
            addr: 0,
            state_size: 144,
            mmap_prot: prot,
            mmap_flags: flags,
            page_size,
        };
        let page = map_page(&p).expect("an anonymous read-write page");
        assert_ne!(page, 0);
        assert_eq!(page % page_size, 0);
        // SAFETY: the page is mapped read-write, `page_size` bytes, and ours alone.
        let bytes = unsafe { core::slice::from_raw_parts_mut(page as *mut u8, page_size) };
        assert!(
            bytes.iter().all(|&b| b == 0),
            "a fresh anonymous page is zeroed"
        );
        bytes[page_size - 1] = 0xa5;
        assert_eq!(bytes[page_size - 1], 0xa5);
        // SAFETY: nothing uses the page after this.
        unsafe { unmap_page(page, page_size) };
    }
}
