//! RISC-V 64: `ecall`, number in a7, arguments in a0–a4.

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
    // SAFETY: the caller vouches for the arguments; `ecall` preserves every register but a0.
    unsafe {
        core::arch::asm!(
            "ecall",
            in("a7") nr as usize,
            inlateout("a0") a0 as isize => ret,
            in("a1") a1, in("a2") a2, in("a3") a3, in("a4") a4,
            options(nostack, preserves_flags)
        );
    }
    ret
}
