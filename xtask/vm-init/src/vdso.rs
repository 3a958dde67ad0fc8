//! The vDSO's clock_gettime, found without vdsotime and without libc: libcs differ in which
//! vDSOs they use (musl needs DT_HASH, which arm64's lacks since 6.11), and the probe in
//! [`crate::truth`] must ask the vDSO itself. A real kernel's image is mapped whole, section
//! headers included, so the dynamic symbol table is found through them and scanned.

/// The vDSO's clock_gettime symbol, taking a 64-bit `struct timespec`.
#[cfg(target_arch = "x86_64")]
pub const CLOCK_GETTIME: &str = "__vdso_clock_gettime";
#[cfg(any(target_arch = "x86", target_arch = "arm"))]
pub const CLOCK_GETTIME: &str = "__vdso_clock_gettime64";
#[cfg(target_arch = "riscv64")]
pub const CLOCK_GETTIME: &str = "__vdso_clock_gettime";
#[cfg(any(
    target_arch = "aarch64",
    target_arch = "s390x",
    target_arch = "powerpc64"
))]
pub const CLOCK_GETTIME: &str = "__kernel_clock_gettime";

#[cfg(target_pointer_width = "64")]
mod elf {
    pub type Ehdr = libc::Elf64_Ehdr;
    pub type Phdr = libc::Elf64_Phdr;
    pub type Shdr = libc::Elf64_Shdr;
    pub type Sym = libc::Elf64_Sym;
}
#[cfg(target_pointer_width = "32")]
mod elf {
    pub type Ehdr = libc::Elf32_Ehdr;
    pub type Phdr = libc::Elf32_Phdr;
    pub type Shdr = libc::Elf32_Shdr;
    pub type Sym = libc::Elf32_Sym;
}

const SHT_DYNSYM: u32 = 11;

/// The address of the vDSO's `name` in this process, if it has a vDSO exporting it.
pub fn symbol(name: &str) -> Option<usize> {
    // SAFETY: getauxval only reads the auxiliary vector.
    let base = unsafe { libc::getauxval(libc::AT_SYSINFO_EHDR) } as usize;
    if base == 0 {
        return None;
    }
    // SAFETY: the kernel maps the whole vDSO image at `base`, readable, for the life of the
    // process; every offset read below is the image's own, checked against its length.
    unsafe { find(base, name) }
}

/// # Safety
/// `base` must be the start of a whole ELF image mapped readable.
unsafe fn find(base: usize, name: &str) -> Option<usize> {
    // SAFETY: the caller guarantees a whole ELF image at `base`; every table read lies
    // where the image's own headers put it.
    unsafe {
        let read = |at: usize| at as *const u8;
        let eh = &*(read(base) as *const elf::Ehdr);
        if eh.e_ident[..4] != *b"\x7fELF" {
            return None;
        }
        let phdrs = std::slice::from_raw_parts(
            read(base + eh.e_phoff as usize) as *const elf::Phdr,
            usize::from(eh.e_phnum),
        );
        let load = phdrs.iter().find(|p| p.p_type == libc::PT_LOAD)?;
        let shdrs = std::slice::from_raw_parts(
            read(base + eh.e_shoff as usize) as *const elf::Shdr,
            usize::from(eh.e_shnum),
        );
        let dynsym = shdrs.iter().find(|s| s.sh_type == SHT_DYNSYM)?;
        let strtab = shdrs.get(dynsym.sh_link as usize)?;
        let count = dynsym.sh_size as usize / std::mem::size_of::<elf::Sym>();
        let syms = std::slice::from_raw_parts(
            read(base + dynsym.sh_offset as usize) as *const elf::Sym,
            count,
        );
        let strings = base + strtab.sh_offset as usize;
        syms.iter()
            .filter(|s| s.st_shndx != 0 && s.st_value != 0)
            .find(|s| {
                let at = read(strings + s.st_name as usize) as *const libc::c_char;
                std::ffi::CStr::from_ptr(at).to_bytes() == name.as_bytes()
            })
            .map(|s| base + (s.st_value as usize).wrapping_sub(load.p_vaddr as usize))
    }
}

/// The vDSO's clock_gettime(`clock`): its return value (0, or a negative errno).
pub fn clock_gettime(clock: libc::clockid_t) -> Option<i64> {
    let address = symbol(CLOCK_GETTIME)?;
    #[repr(C)]
    struct Timespec64 {
        sec: i64,
        nsec: i64,
    }
    type Fn = unsafe extern "C" fn(libc::clockid_t, *mut Timespec64) -> libc::c_long;
    let mut ts = Timespec64 { sec: 0, nsec: 0 };
    // SAFETY: the vDSO's clock_gettime (time64 on 32-bit ABIs) has this C signature and
    // writes one timespec; the address is the symbol's in the mapped image.
    let r = unsafe { std::mem::transmute::<usize, Fn>(address)(clock, &mut ts) };
    Some(i64::from(r as i32))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On the machine running the tests (Linux, with a vDSO), the lookup finds the symbol,
    /// which serves CLOCK_MONOTONIC and refuses an invalid clock.
    #[test]
    fn finds_and_calls_this_processs_vdso() {
        assert!(symbol(CLOCK_GETTIME).is_some());
        assert_eq!(symbol("__vdso_no_such_symbol"), None);
        assert_eq!(clock_gettime(libc::CLOCK_MONOTONIC), Some(0));
        assert!(clock_gettime(-1).is_some_and(|r| r < 0));
    }
}
