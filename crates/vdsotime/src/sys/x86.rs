//! i386: `int $0x80`, number in eax, arguments in ebx, ecx, edx, esi, edi. LLVM
//! reserves ebx and esi, so the first and fourth arguments are swapped in by hand.

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
    let args = [a0, a3];
    // SAFETY: the caller vouches for the arguments. ebx and esi are saved on the stack,
    // loaded from `args` for the call and restored after it; `int 0x80` preserves every
    // register but eax.
    unsafe {
        core::arch::asm!(
            "push ebx",
            "push esi",
            "mov ebx, [{args}]",
            "mov esi, [{args} + 4]",
            "int 0x80",
            "pop esi",
            "pop ebx",
            args = in(reg) args.as_ptr(),
            inlateout("eax") nr as isize => ret,
            in("ecx") a1, in("edx") a2, in("edi") a4,
            options(preserves_flags)
        );
    }
    ret
}
