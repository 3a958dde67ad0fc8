//! i386: number in eax, arguments in ebx, ecx, edx, esi, edi, result in eax.
//!
//! The entry is `__kernel_vsyscall` (the vDSO's `sysenter` stub, announced as
//! `AT_SYSINFO`), as glibc uses: `int $0x80` does the same job, but the stub enters the
//! kernel with the CPU's fast system-call instruction where it has one. Until the entry
//! is known, and in
//! processes without a vDSO, `int $0x80` is used. LLVM reserves ebx and esi, so they are
//! saved and loaded by hand.

use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// 0: not looked up yet; 1: none (or being looked up), use `int $0x80`; else the entry.
static VSYSCALL: AtomicUsize = AtomicUsize::new(0);

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
    let entry = match VSYSCALL.load(Relaxed) {
        0 => find_vsyscall(),
        e => e,
    };
    // The entry's address, then the arguments that go in reserved registers, then nr.
    let block = [entry, a0, a3, nr as usize];
    let ret: isize;
    if entry > 1 {
        // SAFETY: the caller vouches for the arguments. `__kernel_vsyscall` preserves
        // every register but eax; ebx and esi are saved and restored around it, and the
        // entry is called through the stack so no register is needed to hold it.
        unsafe {
            core::arch::asm!(
                "push ebx",
                "push esi",
                "push dword ptr [eax]",
                "mov ebx, [eax + 4]",
                "mov esi, [eax + 8]",
                "mov eax, [eax + 12]",
                "call dword ptr [esp]",
                "add esp, 4",
                "pop esi",
                "pop ebx",
                inlateout("eax") block.as_ptr() => ret,
                in("ecx") a1, in("edx") a2, in("edi") a4,
            );
        }
    } else {
        // SAFETY: as above, with `int $0x80`, which preserves every register but eax.
        unsafe {
            core::arch::asm!(
                "push ebx",
                "push esi",
                "mov ebx, [eax + 4]",
                "mov esi, [eax + 8]",
                "mov eax, [eax + 12]",
                "int 0x80",
                "pop esi",
                "pop ebx",
                inlateout("eax") block.as_ptr() => ret,
                in("ecx") a1, in("edx") a2, in("edi") a4,
            );
        }
    }
    ret
}

/// Looks up `AT_SYSINFO`; the system calls this makes meanwhile use `int $0x80`.
#[cold]
#[inline(never)]
fn find_vsyscall() -> usize {
    VSYSCALL.store(1, Relaxed);
    let entry = crate::auxv::lookup(linux_raw_sys::auxvec::AT_SYSINFO as usize).unwrap_or(1);
    VSYSCALL.store(entry, Relaxed);
    entry
}
