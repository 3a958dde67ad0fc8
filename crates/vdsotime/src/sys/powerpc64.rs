//! 64-bit powerpc: `sc`, number in r0, arguments in r3–r8. Errors come back as a
//! *positive* errno in r3 with CR0.SO set; both the syscall and the vDSO functions use
//! that convention, so both are normalized here to the `-errno` every other arch returns.

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
    // SAFETY: the caller vouches for the arguments. The kernel may clobber r0, r4–r12,
    // ctr, xer and cr0, all declared; the result is negated when CR0.SO reports an error.
    unsafe {
        core::arch::asm!(
            "sc",
            "bns+ 1f",
            "neg 3, 3",
            "1:",
            inlateout("r0") nr as usize => _,
            inlateout("r3") a0 as isize => ret,
            inlateout("r4") a1 => _, inlateout("r5") a2 => _, inlateout("r6") a3 => _,
            inlateout("r7") a4 => _, inlateout("r8") a5 => _,
            lateout("r9") _, lateout("r10") _, lateout("r11") _, lateout("r12") _,
            lateout("ctr") _, lateout("xer") _, lateout("cr0") _,
            options(nostack)
        );
    }
    ret
}

/// Calls a vDSO function at `addr` with three arguments: [`vdso_call5`] with two zeros.
///
/// # Safety
/// As for [`vdso_call5`].
#[inline]
pub(crate) unsafe fn vdso_call(addr: usize, a0: usize, a1: usize, a2: usize) -> isize {
    // SAFETY: forwarded from the caller; the extra arguments are zero and unused.
    unsafe { vdso_call5(addr, a0, a1, a2, 0, 0) }
}

/// Calls a vDSO function at `addr` with up to five arguments, as glibc's
/// `INTERNAL_VSYSCALL_CALL_TYPE` does: through ctr with r12 holding the entry (the
/// ELFv2 global entry convention), from a fresh 128-byte frame (large enough for the
/// ELFv1 and ELFv2 frame headers), checking CR0.SO for errors.
///
/// # Safety
/// `addr` must be the code of a vDSO function taking at most five arguments that are
/// valid for it.
#[inline]
pub(crate) unsafe fn vdso_call5(
    addr: usize,
    a0: usize,
    a1: usize,
    a2: usize,
    a3: usize,
    a4: usize,
) -> isize {
    let ret: isize;
    // SAFETY: the caller vouches for `addr` and the arguments. The vDSO functions follow
    // the C ABI for non-volatile registers; every volatile register they may clobber
    // (r0, r4–r12, ctr, lr, xer, cr0, cr1, cr5–cr7) is declared.
    unsafe {
        core::arch::asm!(
            // A frame of our own: the callee saves lr in its caller's frame header.
            "stdu 1, -128(1)",
            "mtctr 12",
            "bctrl",
            "addi 1, 1, 128",
            "bns+ 1f",
            "neg 3, 3",
            "1:",
            inlateout("r12") addr => _,
            inlateout("r3") a0 as isize => ret,
            inlateout("r4") a1 => _, inlateout("r5") a2 => _,
            inlateout("r6") a3 => _, inlateout("r7") a4 => _,
            lateout("r0") _, lateout("r8") _, lateout("r9") _,
            lateout("r10") _, lateout("r11") _,
            lateout("ctr") _, lateout("lr") _, lateout("xer") _,
            lateout("cr0") _, lateout("cr1") _, lateout("cr5") _, lateout("cr6") _, lateout("cr7") _,
        );
    }
    ret
}
