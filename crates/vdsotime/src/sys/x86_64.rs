//! x86-64: `syscall`, number in rax, arguments in rdi, rsi, rdx, r10, r8, r9.

/// Performs system call `nr` with six arguments (`mmap`).
///
/// # Safety
/// The arguments must be valid for that system call (pointers writable, etc.).
#[inline]
pub(crate) unsafe fn syscall6(
    nr: u32,
    a0: usize,
    a1: usize,
    a2: usize,
    a3: usize,
    a4: usize,
    a5: usize,
) -> isize {
    let ret: isize;
    // SAFETY: the caller vouches for the arguments; `syscall` clobbers only rcx and
    // r11 besides rax, declared here, and touches no stack.
    unsafe {
        core::arch::asm!(
            "syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") a0, in("rsi") a1, in("rdx") a2, in("r10") a3, in("r8") a4, in("r9") a5,
            lateout("rcx") _, lateout("r11") _,
            options(nostack, preserves_flags)
        );
    }
    ret
}
