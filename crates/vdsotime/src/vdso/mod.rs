//! [`Vdso`]: a validated vDSO image, and the process's own one ([`this_process`]). It knows the
//! vDSO, not the clocks: which symbols exist, at which addresses, for which architecture.

mod this_process;

pub use this_process::vdso;
pub(crate) use this_process::{own, publish, publish_absent};

use crate::arch::{self, ArchTable};
use crate::elf::{Any, ElfClass, ElfError, Endian, Form, Header, Image};
use crate::elf::{Symbol, Symbols, Versions};
use crate::readable::readable;

/// A parsed vDSO image (or any ELF shared object held in memory).
///
/// [`Vdso::parse`] takes arbitrary bytes and never panics or reads outside them;
/// [`vdso`] gives the one the kernel mapped into this process.
///
/// ```
/// if let Some(v) = vdsotime::vdso() {
///     let table = v.arch().expect("the running kernel's vDSO matches a known arch");
///     let name = table.clock_gettime64.or(table.clock_gettime).unwrap();
///     let sym = v.lookup(name, Some(table.version)).expect("clock_gettime is exported");
///     assert_eq!(sym.version, Some(table.version));
///     assert!(v.symbols().any(|s| s.name == name));
/// }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Vdso<'a> {
    image: Image<'a, Any>,
    /// The number of dynamic symbols, counted and checked to fit.
    nsyms: usize,
    base: usize,
}

impl<'a> Vdso<'a> {
    /// Validates `bytes` as an ELF shared object with a dynamic symbol table.
    /// Symbol addresses are relative to where `bytes` lies in memory.
    ///
    /// Any class, byte order and machine is read (a vDSO saved from another
    /// architecture, say); [`Vdso::is_native`] tells whether it is this process's.
    ///
    /// # Errors
    ///
    /// An [`ElfError`] naming the first thing wrong: [`ElfError::TooShort`] and
    /// [`ElfError::BadMagic`] for something that is not an ELF image,
    /// [`ElfError::NotSharedObject`] for an executable, [`ElfError::NoHashTable`] when the
    /// symbols cannot be counted, [`ElfError::OutOfBounds`] or
    /// [`ElfError::AddressOutsideSegment`] for a table that runs past the image. Every
    /// read is bounds-checked: bad bytes are an error, never a panic or a read outside
    /// `bytes`.
    ///
    /// # Example
    ///
    /// ```
    /// use vdsotime::{ElfError, Vdso};
    /// assert_eq!(Vdso::parse(b"not an ELF image at all, clearly").unwrap_err(), ElfError::BadMagic);
    /// assert_eq!(Vdso::parse(&[]).unwrap_err(), ElfError::TooShort);
    /// ```
    pub fn parse(bytes: &'a [u8]) -> Result<Vdso<'a>, ElfError> {
        let (image, nsyms) = Image::parse(bytes)?;
        Ok(Vdso {
            image,
            nsyms,
            base: bytes.as_ptr() as usize,
        })
    }

    /// Sizes, checks and parses an image the kernel mapped at `addr`, and requires it
    /// to be for this process's architecture.
    ///
    /// The kernel does not say how long the vDSO is. The kernel first confirms that the
    /// first 4 KiB can be read (every Linux page is at least that; see [`crate::init`]
    /// for the system call), the header and program headers are read from there, the
    /// length is taken from the loaded segment and the section headers, and every page of
    /// the whole range is confirmed readable before any more of it is read. An address
    /// that cannot be read is [`ElfError::OutOfBounds`]`("mapping (not readable)")`.
    ///
    /// # Errors
    ///
    /// [`ElfError::OutOfBounds`]`("mapping (not readable)")` for an address that cannot
    /// be read; [`ElfError::ForeignMachine`] for a valid image of another architecture;
    /// otherwise what [`Vdso::parse`] says of the bytes.
    ///
    /// # Example
    ///
    /// ```
    /// if let Some(addr) = vdsotime::auxv::sysinfo_ehdr() {
    ///     // SAFETY: AT_SYSINFO_EHDR is the kernel's mapping of the vDSO, mapped for the
    ///     // life of the process.
    ///     let v = unsafe { vdsotime::Vdso::from_address(addr) }.unwrap();
    ///     assert_eq!(v.base(), addr);
    ///     assert!(v.is_native());
    /// }
    /// ```
    ///
    /// # Safety
    /// `addr` must be the start of a readable mapping of at least 4 KiB that stays
    /// mapped for the life of the process, such as `AT_SYSINFO_EHDR`.
    pub unsafe fn from_address(addr: usize) -> Result<Vdso<'static>, ElfError> {
        // SAFETY: forwarded from the caller; every range is confirmed readable first.
        unsafe { Vdso::sized(addr, Confirm::Whole) }
    }

    /// Sizes and parses the image at `addr` for this process's architecture, confirming
    /// what `confirm` says before reading it.
    ///
    /// # Safety
    /// Every range `confirm` leaves unconfirmed must be mapped.
    unsafe fn sized(addr: usize, confirm: Confirm) -> Result<Vdso<'static>, ElfError> {
        // SAFETY: forwarded from the caller.
        let v = unsafe { Vdso::at(addr, confirm) }?;
        if !v.is_native() {
            return Err(ElfError::ForeignMachine {
                machine: v.machine(),
                class: v.class(),
            });
        }
        Ok(v)
    }

    /// Sizes and parses the image at `addr` ([`mapped`]), and counts and checks its
    /// symbols.
    ///
    /// # Safety
    /// As for [`mapped`].
    unsafe fn at(addr: usize, confirm: Confirm) -> Result<Vdso<'static>, ElfError> {
        // SAFETY: forwarded from the caller.
        let image = unsafe { mapped::<Any>(addr, confirm) }?;
        Ok(Vdso {
            image,
            nsyms: image.check()?,
            base: addr,
        })
    }

    /// The image bytes, ready to write to a file for `readelf`/`objdump`.
    ///
    /// # Example
    ///
    /// ```
    /// if let Some(v) = vdsotime::vdso() {
    ///     assert_eq!(&v.bytes()[..4], b"\x7fELF");
    ///     // std::fs::write("vdso.so", v.bytes()) saves it for `readelf -a vdso.so`.
    /// }
    /// ```
    pub fn bytes(&self) -> &'a [u8] {
        self.image.bytes()
    }

    /// Address of `bytes()[0]`: where the image lies in memory. Symbol addresses
    /// ([`Symbol::address`]) are this plus the symbol's offset.
    ///
    /// # Example
    ///
    /// ```
    /// if let Some(v) = vdsotime::vdso() {
    ///     assert_eq!(v.base(), v.bytes().as_ptr() as usize);
    /// }
    /// ```
    pub fn base(&self) -> usize {
        self.base
    }

    /// ELF class of the image.
    ///
    /// # Example
    ///
    /// ```
    /// use vdsotime::ElfClass;
    /// if let Some(v) = vdsotime::vdso() {
    ///     let want = if cfg!(target_pointer_width = "64") { ElfClass::Elf64 } else { ElfClass::Elf32 };
    ///     assert_eq!(v.class(), want);
    /// }
    /// ```
    pub fn class(&self) -> ElfClass {
        self.image.header.class()
    }

    /// Byte order of the image.
    ///
    /// # Example
    ///
    /// ```
    /// use vdsotime::Endian;
    /// if let Some(v) = vdsotime::vdso() {
    ///     assert_eq!(v.endian() == Endian::Little, cfg!(target_endian = "little"));
    /// }
    /// ```
    pub fn endian(&self) -> Endian {
        self.image.header.endian()
    }

    /// `e_machine` of the image (62 for x86_64, 183 for aarch64, ...).
    ///
    /// # Example
    ///
    /// ```
    /// if let Some(v) = vdsotime::vdso() {
    ///     // The kernel maps a vDSO of the process's own architecture.
    ///     assert_eq!(v.machine(), vdsotime::arch::NATIVE.machine);
    /// }
    /// ```
    pub fn machine(&self) -> u16 {
        self.image.header.machine
    }

    /// Whether the image has a `DT_GNU_HASH` table.
    ///
    /// # Example
    ///
    /// ```
    /// if let Some(v) = vdsotime::vdso() {
    ///     println!("GNU hash: {}, SysV hash: {}", v.has_gnu_hash(), v.has_sysv_hash());
    /// }
    /// ```
    pub fn has_gnu_hash(&self) -> bool {
        self.image.has_gnu_hash()
    }

    /// Whether the image has a SysV `DT_HASH` table.
    ///
    /// # Example
    ///
    /// ```
    /// if let Some(v) = vdsotime::vdso() {
    ///     assert!(v.has_sysv_hash() || v.has_gnu_hash());
    /// }
    /// ```
    pub fn has_sysv_hash(&self) -> bool {
        self.image.has_sysv_hash()
    }

    /// Whether the image has symbol versions (`DT_VERSYM` and `DT_VERDEF`).
    ///
    /// # Example
    ///
    /// ```
    /// if let Some(v) = vdsotime::vdso() {
    ///     // A versioned image names the versions of its functions.
    ///     let versioned = v.symbols().any(|s| s.version.is_some());
    ///     assert_eq!(v.has_versions(), versioned);
    /// }
    /// ```
    pub fn has_versions(&self) -> bool {
        self.image.has_versions()
    }

    /// Every defined global or weak function symbol, in table order.
    ///
    /// # Example
    ///
    /// ```
    /// if let Some(v) = vdsotime::vdso() {
    ///     for s in v.symbols() {
    ///         println!("{} {:?} at {:#x}", s.name, s.version, s.address);
    ///     }
    ///     assert!(v.symbols().any(|s| s.name.contains("clock_gettime")));
    /// }
    /// ```
    pub fn symbols(&self) -> Symbols<'a> {
        self.image.symbols(self.nsyms, self.base)
    }

    /// Finds `name`; with `Some(version)`, only that version (or an unversioned symbol).
    /// A malformed table gives `None`.
    ///
    /// The lookup goes through the image's GNU hash table where it has one, else its SysV
    /// table, as the dynamic loader does.
    ///
    /// # Example
    ///
    /// ```
    /// if let Some(v) = vdsotime::vdso() {
    ///     let first = v.symbols().next().expect("a vDSO exports functions");
    ///     let found = v.lookup(first.name, first.version).expect("found by its name");
    ///     assert_eq!(found.address, first.address);
    ///     if first.version.is_some() {
    ///         assert!(v.lookup(first.name, Some("NO_SUCH_VERSION")).is_none());
    ///     }
    ///     assert!(v.lookup("no_such_function", None).is_none());
    /// }
    /// ```
    pub fn lookup(&self, name: &str, version: Option<&str>) -> Option<Symbol<'a>> {
        self.image.lookup(name, version, self.base).ok().flatten()
    }

    /// The architecture table matching the image's `e_machine` and class: the names and
    /// version of its functions. `None` for an architecture without a Linux vDSO table.
    ///
    /// # Example
    ///
    /// ```
    /// if let Some(v) = vdsotime::vdso() {
    ///     assert!(core::ptr::eq(v.arch().unwrap(), vdsotime::arch::NATIVE));
    /// }
    /// ```
    pub fn arch(&self) -> Option<&'static ArchTable> {
        arch::for_machine(self.machine(), self.class())
    }

    /// The version names the image defines (`DT_VERDEF`), in table order, without the
    /// file's own name: `LINUX_2.6` in an x86 vDSO. Empty in an image without versions.
    ///
    /// # Example
    ///
    /// ```
    /// if let Some(v) = vdsotime::vdso() {
    ///     for s in v.symbols() {
    ///         if let Some(version) = s.version {
    ///             assert!(v.versions().any(|d| d == version));
    ///         }
    ///     }
    /// }
    /// ```
    pub fn versions(&self) -> Versions<'a> {
        self.image.versions()
    }

    /// Whether the image is for this process: same machine, class and byte order.
    /// Only a native image's functions can be called.
    ///
    /// # Example
    ///
    /// ```
    /// if let Some(v) = vdsotime::vdso() {
    ///     assert!(v.is_native());
    /// }
    /// ```
    pub fn is_native(&self) -> bool {
        let native = arch::NATIVE;
        let endian = if cfg!(target_endian = "little") {
            Endian::Little
        } else {
            Endian::Big
        };
        self.machine() == native.machine && self.class() == native.class && self.endian() == endian
    }
}

/// The smallest Linux page: what `from_address` may read before it knows the length.
const MIN_PAGE: usize = 4096;

/// Why an image at an address was not read.
const NOT_READABLE: ElfError = ElfError::OutOfBounds("mapping (not readable)");

/// What [`mapped`] confirms readable before reading an image.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Confirm {
    /// The first page, then the whole length: an address a caller or `PR_GET_AUXV` gave.
    Whole,
    /// The first page only: the kernel's own mapping of the vDSO, one mapping that holds
    /// the whole image with one protection, so its first page being readable says the
    /// image is (a process that unmaps `[vdso]` or makes it `PROT_NONE` changes all of
    /// it). One system call, for the first call's sake.
    FirstPage,
}

/// Sizes the image at `addr` and locates its tables, read in the form `F`: its header
/// and program headers from the first 4 KiB once the kernel confirmed they can be read
/// ([`readable`]), then the rest (confirmed too with [`Confirm::Whole`]). The header is
/// parsed once. Even the header is read only once its page is known to be readable: an
/// emulator may hand out an address that is not mapped in the guest, and a process may
/// have unmapped its vDSO or made it unreadable.
///
/// # Safety
/// With [`Confirm::FirstPage`], the image's length past its first page must be mapped
/// and readable wherever that page is (the kernel's own mapping of the vDSO).
#[inline(never)] // prefetched by its address (the native instantiation): see `this_process`
unsafe fn mapped<F: Form>(addr: usize, confirm: Confirm) -> Result<Image<'static, F>, F::Error> {
    if !readable(addr, MIN_PAGE) {
        return Err(NOT_READABLE.into());
    }
    // SAFETY: the kernel just read the first 4 KiB at `addr` (its page, at least 4 KiB).
    let first = unsafe { core::slice::from_raw_parts(addr as *const u8, MIN_PAGE) };
    let header = Header::<F>::parse(first)?;
    let (load, len) = header.extent(first)?;
    if confirm == Confirm::Whole && !readable(addr, len) {
        return Err(NOT_READABLE.into());
    }
    // SAFETY: `len` bytes from `addr` are readable: confirmed page by page, or the
    // kernel's mapping of the whole image (the caller's promise); the vDSO is never
    // written by user space.
    let bytes = unsafe { core::slice::from_raw_parts(addr as *const u8, len) };
    Image::open(header, load, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The page at address 0, which Linux never maps (`vm.mmap_min_addr`): unlike an
    /// unmapped hole in the heap, no other test thread can map it meanwhile.
    const HOLE: usize = 0;

    #[test]
    fn an_unreadable_caller_given_address_is_refused_before_any_read() {
        for addr in [HOLE, HOLE + 1, HOLE + 4095, usize::MAX & !4095] {
            // SAFETY: deliberately not a mapping: from_address must find out from the
            // kernel before it reads a byte.
            let got = unsafe { Vdso::from_address(addr) };
            assert_eq!(got.err(), Some(NOT_READABLE), "{addr:#x}");
        }
        if let Some(v) = vdso() {
            // SAFETY: inside the vDSO, which is mapped for good: refused, by the kernel's
            // answer (QEMU user mode's) or by the header read there.
            let got = unsafe { Vdso::from_address(v.base() + 16) };
            assert!(matches!(got.err(), Some(ElfError::BadMagic | NOT_READABLE)));
        }
    }
}
