//! Raw system calls: one inline-asm entry per architecture, behind `cfg`, returning
//! the kernel's value (`-errno` on failure) as `isize`. Nothing here touches `errno`,
//! allocates or locks, so all of it is async-signal-safe.

/// The whole syscall entry for an architecture whose convention is "number in one
/// register, arguments in six others, result in the first argument's register, the
/// rest preserved" (plus any registers the kernel clobbers): its instruction and its
/// registers are all that differ.
#[allow(unused_macros)]
macro_rules! register_syscall {
    ($insn:literal, nr = $nr:tt, args = [$a0:tt, $a1:tt, $a2:tt, $a3:tt, $a4:tt, $a5:tt]
     $(, clobbers = [$($c:tt),*])?) => {
        /// Performs system call `nr` with six arguments (`mmap`).
        ///
        /// # Safety
        /// The arguments must be valid for that system call (pointers writable, etc.).
        #[inline]
        pub(crate) unsafe fn syscall6(nr: u32, a0: usize, a1: usize, a2: usize, a3: usize, a4: usize, a5: usize) -> isize {
            let ret: isize;
            // SAFETY: the caller vouches for the arguments; the kernel preserves every
            // register but the result and the clobbers declared here.
            unsafe {
                core::arch::asm!(
                    $insn,
                    in($nr) nr as usize,
                    inlateout($a0) a0 as isize => ret,
                    in($a1) a1, in($a2) a2, in($a3) a3, in($a4) a4, in($a5) a5,
                    $($(lateout($c) _,)*)?
                    options(nostack, preserves_flags)
                );
            }
            ret
        }
    };
}

#[cfg_attr(target_arch = "x86_64", path = "x86_64.rs")]
#[cfg_attr(target_arch = "x86", path = "x86.rs")]
#[cfg_attr(target_arch = "aarch64", path = "aarch64.rs")]
#[cfg_attr(target_arch = "arm", path = "arm.rs")]
#[cfg_attr(target_arch = "riscv64", path = "riscv64.rs")]
#[cfg_attr(target_arch = "powerpc64", path = "powerpc64.rs")]
#[cfg_attr(target_arch = "s390x", path = "s390x.rs")]
#[cfg_attr(target_arch = "loongarch64", path = "loongarch64.rs")]
mod imp;

#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "aarch64",
    target_arch = "arm",
    target_arch = "riscv64",
    target_arch = "powerpc64",
    target_arch = "s390x",
    target_arch = "loongarch64",
)))]
compile_error!("vdsotime has no raw system call code for this architecture yet");

#[cfg(target_pointer_width = "32")]
pub(crate) use imp::syscall;
/// Six-argument system calls (`mmap`): the one entry of the 64-bit targets, the only
/// ones that map vDSO getrandom states.
#[cfg(target_pointer_width = "64")]
pub(crate) use imp::syscall6;

/// Performs system call `nr` with five arguments (unused ones zero): on 64-bit targets,
/// the six-argument entry with a zero sixth.
///
/// # Safety
/// The arguments must be valid for that system call (pointers writable, etc.).
#[cfg(target_pointer_width = "64")]
#[inline]
pub(crate) unsafe fn syscall(
    nr: u32,
    a0: usize,
    a1: usize,
    a2: usize,
    a3: usize,
    a4: usize,
) -> isize {
    // SAFETY: forwarded from the caller; the sixth argument is unused (zero).
    unsafe { syscall6(nr, a0, a1, a2, a3, a4, 0) }
}
#[cfg(target_arch = "powerpc64")]
pub(crate) use imp::{vdso_call, vdso_call5};

pub(crate) use linux_raw_sys::general as nr;
