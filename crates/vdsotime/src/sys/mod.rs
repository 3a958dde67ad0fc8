//! Raw system calls: one inline-asm entry per architecture, behind `cfg`, returning
//! the kernel's value (`-errno` on failure) as `isize`. Nothing here touches `errno`,
//! allocates or locks, so all of it is async-signal-safe.

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

pub(crate) use imp::syscall;
#[cfg(target_arch = "powerpc64")]
pub(crate) use imp::vdso_call;

pub(crate) use linux_raw_sys::general as nr;
