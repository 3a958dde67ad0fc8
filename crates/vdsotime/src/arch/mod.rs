//! What each architecture's vDSO exports, as data: one [`ArchTable`] per architecture,
//! in the style of the Go runtime's `vdso_linux_<arch>.go`. The tables for every
//! architecture are compiled on every host so any image can be checked against its own.

mod tables;

use crate::elf::ElfClass;
pub use tables::*;

/// The symbols one architecture's vDSO exports for time, and the rules for using them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArchTable {
    /// Short name, e.g. `"x86_64"`, `"i686"`, `"aarch64"`.
    pub name: &'static str,
    /// `e_machine` of its vDSO image.
    pub machine: u16,
    /// ELF class of its vDSO image.
    pub class: ElfClass,
    /// The version node every symbol below is defined in.
    pub version: &'static str,
    /// `clock_gettime` writing a native `struct timespec` (time32 on 32-bit).
    pub clock_gettime: Option<&'static str>,
    /// `clock_gettime` writing a 64-bit `struct __kernel_timespec` (32-bit arches only).
    pub clock_gettime64: Option<&'static str>,
    /// `clock_getres` (native `struct timespec`).
    pub clock_getres: Option<&'static str>,
    /// `clock_getres` with a 64-bit `struct __kernel_timespec`: 32-bit arches, only in
    /// kernels newer than 6.18, so its absence is normal (the time32 one is used then).
    pub clock_getres64: Option<&'static str>,
    /// `gettimeofday` (native `struct timeval`).
    pub gettimeofday: Option<&'static str>,
    /// `time` (native `time_t`).
    pub time: Option<&'static str>,
    /// `getcpu`.
    pub getcpu: Option<&'static str>,
    /// `getrandom` (Linux 6.11+ on x86-64, 6.12+ on arm64, powerpc, s390x and
    /// loongarch, 6.16+ on riscv64); `None` on 32-bit targets, where vdsotime always
    /// makes the system call. Not one of [`ArchTable::symbols`], which are the time
    /// symbols every kernel of the architecture exports.
    pub getrandom: Option<&'static str>,
    /// Trust the time64 symbol only when the time32 one is also present: arm kernels
    /// 5.5–5.7 could export a broken `__vdso_clock_gettime64` while zeroing the names
    /// of the time32 symbols (musl's rule).
    pub time64_needs_time32: bool,
    /// Whether its vDSO functions report errors as a positive errno with CR0.SO set and
    /// clobber more than the C ABI allows, so they need an asm call sequence (powerpc).
    pub needs_call_shim: bool,
    /// Whether its old vDSOs answered `ENOSYS` for a clock they could not serve instead
    /// of asking the kernel (MIPS before the generic vDSO, as musl notes): there an
    /// `ENOSYS` is asked of the syscall. Everywhere else a vDSO error is the kernel's own.
    pub enosys_means_unserved: bool,
}

impl ArchTable {
    /// Every time symbol the table names, with the version it must have.
    ///
    /// # Example
    ///
    /// ```
    /// let t = vdsotime::arch::NATIVE;
    /// let names: Vec<&str> = t.symbols().collect();
    /// assert!(names.iter().any(|n| n.contains("clock_gettime")));
    /// ```
    pub fn symbols(&self) -> impl Iterator<Item = &'static str> + '_ {
        [
            self.clock_gettime,
            self.clock_gettime64,
            self.clock_getres,
            self.clock_getres64,
            self.gettimeofday,
            self.time,
            self.getcpu,
        ]
        .into_iter()
        .flatten()
    }
}

/// The table for an image with this `e_machine` and class, if vdsotime knows it.
///
/// ```
/// use vdsotime::{arch, ElfClass};
/// let t = arch::for_machine(62, ElfClass::Elf64).unwrap();
/// assert_eq!(t.name, "x86_64");
/// assert_eq!(t.clock_gettime, Some("__vdso_clock_gettime"));
/// ```
pub fn for_machine(machine: u16, class: ElfClass) -> Option<&'static ArchTable> {
    ALL.iter()
        .copied()
        .find(|t| t.machine == machine && t.class == class)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elf::machine::NATIVE_MACHINE;

    /// The reader of the process's own vDSO checks `e_machine` against the ELF module's
    /// fact, and binding takes the symbols from this module's table: the two must agree.
    #[test]
    fn the_native_table_is_the_one_for_this_machine_and_class() {
        let class = if core::mem::size_of::<usize>() == 8 {
            ElfClass::Elf64
        } else {
            ElfClass::Elf32
        };
        assert_eq!(NATIVE.machine, NATIVE_MACHINE);
        assert_eq!(NATIVE.class, class);
        assert_eq!(for_machine(NATIVE_MACHINE, class), Some(NATIVE));
    }
}
