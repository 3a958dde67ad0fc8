//! 32-bit arm (EABI): `svc #0`, number in r7, arguments in r0–r4. r7 is the Thumb
//! frame pointer, which LLVM may reserve, so it is saved and restored around the call.

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
    // SAFETY: the caller vouches for the arguments; r7 is restored from `saved` (a
    // distinct register: `out` operands never share a register with inputs), and `svc`
    // preserves every register but r0.
    unsafe {
        core::arch::asm!(
            "mov {saved}, r7",
            "mov r7, {nr}",
            "svc 0",
            "mov r7, {saved}",
            nr = in(reg) nr,
            saved = out(reg) _,
            inlateout("r0") a0 as isize => ret,
            in("r1") a1, in("r2") a2, in("r3") a3, in("r4") a4,
            options(nostack, preserves_flags)
        );
    }
    ret
}
