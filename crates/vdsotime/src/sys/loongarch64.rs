//! LoongArch 64: `syscall 0`, number in a7, arguments in a0–a4; t0–t8 are clobbered.

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
    // SAFETY: the caller vouches for the arguments; the kernel clobbers t0–t8, declared.
    unsafe {
        core::arch::asm!(
            "syscall 0",
            in("$a7") nr as usize,
            inlateout("$a0") a0 as isize => ret,
            in("$a1") a1, in("$a2") a2, in("$a3") a3, in("$a4") a4,
            lateout("$t0") _, lateout("$t1") _, lateout("$t2") _, lateout("$t3") _,
            lateout("$t4") _, lateout("$t5") _, lateout("$t6") _, lateout("$t7") _, lateout("$t8") _,
            options(nostack, preserves_flags)
        );
    }
    ret
}
