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
    use crate::sys::{nr, syscall6};
    // SAFETY: an anonymous mapping at an address of the kernel's choosing touches no
    // existing memory; fd -1 and offset 0 as anonymous mappings want.
    let ret = unsafe {
        syscall6(
            nr::__NR_mmap,
            0,
            p.page_size,
            p.mmap_prot as usize,
            p.mmap_flags as usize,
            -1isize as usize,
            0,
        )
    };
    match Errno::from_ret(ret) {
        Some(e) => Err(e),
        None => Ok(ret as usize),
    }
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
