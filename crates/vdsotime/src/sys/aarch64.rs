//! arm64: `svc #0`, number in x8, arguments in x0–x4.

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
    // SAFETY: the caller vouches for the arguments; `svc` preserves every register but x0.
    unsafe {
        core::arch::asm!(
            "svc 0",
            in("x8") nr as usize,
            inlateout("x0") a0 as isize => ret,
            in("x1") a1, in("x2") a2, in("x3") a3, in("x4") a4,
            options(nostack, preserves_flags)
        );
    }
    ret
}
