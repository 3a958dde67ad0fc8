//! s390x: `svc 0`, number in r1, arguments in r2–r6, result in r2.

/// Performs system call `nr` with five arguments (unused ones zero).
///
/// # Safety
/// The arguments must be valid for that system call (pointers writable, etc.).
#[inline]
pub(crate) unsafe fn syscall(
    nr: u32,
    a0: usize,
    a1: usize,
    a2: usize,
    a3: usize,
    a4: usize,
) -> isize {
    let ret: isize;
    // SAFETY: the caller vouches for the arguments; `svc` preserves every register but r2.
    unsafe {
        core::arch::asm!(
            "svc 0",
            in("r1") nr as usize,
            inlateout("r2") a0 as isize => ret,
            in("r3") a1, in("r4") a2, in("r5") a3, in("r6") a4,
            options(nostack, preserves_flags)
        );
    }
    ret
}
