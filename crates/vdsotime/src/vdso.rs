//! [`Vdso`]: a validated vDSO image, and the process's own one. It knows the vDSO,
//! not the clocks: which symbols exist, at which addresses, for which architecture.

use crate::arch::{self, ArchTable};
use crate::elf::{Any, ElfClass, ElfError, Endian, Form, Header, Image, Native, NativeImage};
use crate::elf::{Symbol, Symbols};
use crate::readable::readable;
use core::sync::atomic::{AtomicUsize, Ordering};

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
    /// use vdsotime::{ElfClass, Endian};
    /// if let Some(v) = vdsotime::vdso() {
    ///     // The kernel maps a vDSO of the process's own architecture.
    ///     assert_eq!(v.machine(), vdsotime::arch::NATIVE.machine);
    ///     assert_eq!(v.class(), vdsotime::arch::NATIVE.class);
    ///     let little = cfg!(target_endian = "little");
    ///     assert_eq!(v.endian() == Endian::Little, little);
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
    ///     // Every Linux vDSO can be searched by one hash table or the other.
    ///     assert!(v.has_gnu_hash() || v.has_sysv_hash());
    ///     println!("versions: {}", v.has_versions());
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
    ///     let t = v.arch().unwrap();
    ///     let name = t.clock_gettime64.or(t.clock_gettime).unwrap();
    ///     assert!(v.lookup(name, Some(t.version)).is_some());
    ///     assert!(v.lookup(name, Some("NO_SUCH_VERSION")).is_none());
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
#[inline(never)] // prefetched by its address (the native instantiation): see `own`
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

/// 0: not looked for yet; 1 ([`ABSENT`]): this process has no usable vDSO; else the
/// address of an image [`Vdso::from_address`] accepted, or of the kernel's own mapping
/// that the general parser or the lean reader accepted.
///
/// This one word is all that is published. The length is not stored beside it: it is a
/// function of the image, which stays mapped and unchanged (the contract of
/// [`crate::init_from_image`]), so every reader recomputes it from the header at the
/// address it loaded. A base and a length in two atomics could be read one before and one
/// after a new `init_from_image`, by another thread or by a signal handler that interrupts
/// the publishing thread between its two stores, and pair one image's base with another's
/// length. One word cannot tear, and needs no lock, retry loop or sequence count: a signal
/// handler could wait on those forever for the thread it interrupted.
static BASE: AtomicUsize = AtomicUsize::new(0);
const ABSENT: usize = 1;

/// This process's vDSO, found through the auxiliary vector on first use; `None` when
/// there is none or it failed validation, in which case every call uses syscalls.
///
/// Lock-free and allocation-free: racing first callers each find the same image and
/// store the same address; a reader racing `init_from_image` gets the old image or the
/// new one, whole.
///
/// # Fallback
///
/// `None` is not an error to handle: every function of this crate then makes its system
/// call. It happens under `vdso=0`, valgrind and some emulators, on architectures without
/// a vDSO, and when the process has unmapped its vDSO or made it unreadable (the image's
/// first page is confirmed readable at each call).
///
/// # Example
///
/// ```
/// match vdsotime::vdso() {
///     Some(v) => println!("vDSO at {:#x}, {} bytes", v.base(), v.bytes().len()),
///     None => println!("no vDSO: every call is a system call"),
/// }
/// ```
pub fn vdso() -> Option<Vdso<'static>> {
    match BASE.load(Ordering::Acquire) {
        0 => locate(),
        ABSENT => None,
        // SAFETY: `base` was stored only after the image there was validated; it is
        // read only once its first page is confirmed still readable (a process may unmap
        // its vDSO or make it unreadable at any time, which changes the whole mapping).
        base => unsafe { Vdso::at(base, Confirm::FirstPage) }.ok(),
    }
}

/// The image this process's functions are bound from, read in this process's layout
/// ([`Native`]) for a function's first call: the one recorded (a caller's, or the one a
/// first call found), else the one the auxiliary vector names. That one is recorded, as
/// [`locate`] records it, so that the vector is read once, if it is the kernel's own
/// mapping (an address `PR_GET_AUXV` gave is confirmed whole by [`vdso`] before it is
/// recorded). `None` when there is none, it cannot be read any more, or it is refused.
///
/// The native reading is the general one ([`Vdso`]'s) with the class, byte order and
/// machine fixed at compile time and without counting the symbols; so when it refuses the
/// image the auxiliary vector names, the general reading ([`locate`]) is what decides, and
/// records, whether this process has a vDSO, as [`vdso`] would. It gives the same
/// verdict (a unit test checks it on every mutation of the running image): this function
/// is then served by its system call, and so are the others.
///
/// As for [`vdso`], the first page is confirmed still readable before a byte is read,
/// and the whole image too unless it is the kernel's mapping of it.
#[cold]
pub(crate) fn own() -> Option<NativeImage<'static>> {
    let (addr, confirm, found) = match BASE.load(Ordering::Acquire) {
        0 => {
            // Every function of the native reader, each `#[inline(never)]`.
            crate::elf::prefetch::parser([
                mapped::<Native> as *const () as usize,
                Header::<Native>::parse as *const () as usize,
                Header::<Native>::extent as *const () as usize,
                Image::<Native>::open as *const () as usize,
                NativeImage::<'static>::lookup as *const () as usize,
            ]);
            let Some((addr, confirm)) = own_address() else {
                publish_absent();
                return None;
            };
            (addr, confirm, true)
        }
        ABSENT => return None,
        // Confirmed whole when it was recorded.
        base => (base, Confirm::FirstPage, false),
    };
    // SAFETY: as `mapped` requires: the address of an image (`AT_SYSINFO_EHDR` or one
    // recorded), confirmed as `confirm` says.
    match unsafe { mapped::<Native>(addr, confirm) } {
        Ok(image) => {
            if found && confirm == Confirm::FirstPage {
                BASE.store(addr, Ordering::Release);
            }
            Some(NativeImage::new(image, addr))
        }
        Err(_) => {
            if found {
                let _ = locate();
            }
            None
        }
    }
}

/// `AT_SYSINFO_EHDR`, and what must be confirmed mapped before reading the image there.
fn own_address() -> Option<(usize, Confirm)> {
    use crate::auxv::Source;
    let (addr, source) = crate::auxv::sysinfo_ehdr_from()?;
    let confirm = match source {
        // This process's own AT_SYSINFO_EHDR: the kernel's one mapping of the whole image.
        Source::Own => Confirm::FirstPage,
        // Under an emulator, the host's vector: every range is confirmed.
        Source::Prctl => Confirm::Whole,
    };
    Some((addr, confirm))
}

/// Finds, validates and records the image named by the auxiliary vector, and hands it
/// to the first caller as parsed: nothing is parsed twice.
#[cold]
fn locate() -> Option<Vdso<'static>> {
    let Some((addr, confirm)) = own_address() else {
        publish_absent();
        return None;
    };
    // SAFETY: AT_SYSINFO_EHDR as the kernel reports it: its first page is confirmed still
    // readable (a process may have unmapped its vDSO, or made it unreadable) before it is
    // read, and the rest is confirmed too unless it is the kernel's mapping of the whole
    // image in this process.
    match unsafe { Vdso::sized(addr, confirm) } {
        Ok(v) => {
            BASE.store(addr, Ordering::Release);
            Some(v)
        }
        Err(_) => {
            publish_absent();
            None
        }
    }
}

/// Validates and records the image at `addr` as this process's vDSO.
///
/// # Safety
/// As for [`Vdso::from_address`].
pub(crate) unsafe fn publish(addr: usize) {
    // SAFETY: forwarded from the caller.
    match unsafe { Vdso::from_address(addr) } {
        Ok(_) => BASE.store(addr, Ordering::Release),
        Err(_) => publish_absent(),
    }
}

/// Records that this process has no usable vDSO.
pub(crate) fn publish_absent() {
    BASE.store(ABSENT, Ordering::Release);
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
