//! [`Vdso`]: a validated vDSO image, and the process's own one. It knows the vDSO,
//! not the clocks: which symbols exist, at which addresses, for which architecture.

use crate::arch::{self, ArchTable};
use crate::elf::native::{Layout, NativeImage};
use crate::elf::{ElfClass, ElfError, Endian, Header, Image, Symbol, Symbols};
use crate::sys::{nr, syscall};
use crate::Errno;
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
    image: Image<'a>,
    base: usize,
}

impl<'a> Vdso<'a> {
    /// Validates `bytes` as an ELF shared object with a dynamic symbol table.
    /// Symbol addresses are relative to where `bytes` lies in memory.
    ///
    /// ```
    /// use vdsotime::{ElfError, Vdso};
    /// assert_eq!(Vdso::parse(b"not an ELF image at all, clearly").unwrap_err(), ElfError::BadMagic);
    /// assert_eq!(Vdso::parse(&[]).unwrap_err(), ElfError::TooShort);
    /// ```
    pub fn parse(bytes: &'a [u8]) -> Result<Vdso<'a>, ElfError> {
        Ok(Vdso {
            image: Image::parse(bytes)?,
            base: bytes.as_ptr() as usize,
        })
    }

    /// Sizes, checks and parses an image the kernel mapped at `addr`, and requires it
    /// to be for this process's architecture.
    ///
    /// The kernel does not say how long the vDSO is. `msync` confirms the first 4 KiB
    /// are mapped (every Linux page is at least that), the header and program headers
    /// are read from there, the length is taken from the loaded segment and the section
    /// headers, and `msync` confirms the whole range before any more of it is read.
    ///
    /// # Safety
    /// `addr` must be the start of a readable mapping of at least 4 KiB that stays
    /// mapped for the life of the process, such as `AT_SYSINFO_EHDR`.
    pub unsafe fn from_address(addr: usize) -> Result<Vdso<'static>, ElfError> {
        // SAFETY: forwarded from the caller; `msync` confirms every range first.
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

    /// Sizes and parses the image at `addr`: its header and program headers from the
    /// first 4 KiB, once `msync` confirmed that page, then the rest (confirmed too with
    /// [`Confirm::Whole`]). The header is parsed once.
    ///
    /// # Safety
    /// With [`Confirm::FirstPage`], the image's length past its first page must be
    /// mapped wherever that page is (the kernel's own mapping of the vDSO).
    unsafe fn at(addr: usize, confirm: Confirm) -> Result<Vdso<'static>, ElfError> {
        // Even the header is read only once the page is known to be there: an emulator
        // may hand out an address that is not mapped in the guest, and a process may
        // have unmapped its vDSO.
        if !is_mapped(addr, MIN_PAGE) {
            return Err(ElfError::OutOfBounds("mapping (msync)"));
        }
        // SAFETY: `msync` just confirmed the first 4 KiB at `addr`.
        let first = unsafe { core::slice::from_raw_parts(addr as *const u8, MIN_PAGE) };
        let header = Header::parse(first)?;
        let (load, len) = header.extent(first)?;
        if confirm == Confirm::Whole && !is_mapped(addr, len) {
            return Err(ElfError::OutOfBounds("mapping (msync)"));
        }
        // SAFETY: `len` bytes from `addr` are mapped: confirmed by `msync`, or the
        // kernel's mapping of the whole image (the caller's promise); the vDSO is never
        // written by user space.
        let bytes = unsafe { core::slice::from_raw_parts(addr as *const u8, len) };
        Ok(Vdso {
            image: Image::with_header(header, load, bytes)?,
            base: addr,
        })
    }

    /// The image bytes, ready to write to a file for `readelf`/`objdump`.
    pub fn bytes(&self) -> &'a [u8] {
        self.image.bytes()
    }

    /// Address of `bytes()[0]`.
    pub fn base(&self) -> usize {
        self.base
    }

    /// ELF class of the image.
    pub fn class(&self) -> ElfClass {
        self.image.header.class
    }

    /// Byte order of the image.
    pub fn endian(&self) -> Endian {
        self.image.header.endian
    }

    /// `e_machine` of the image.
    pub fn machine(&self) -> u16 {
        self.image.header.machine
    }

    /// Whether the image has a `DT_GNU_HASH` table.
    pub fn has_gnu_hash(&self) -> bool {
        self.image.has_gnu_hash()
    }

    /// Whether the image has a SysV `DT_HASH` table.
    pub fn has_sysv_hash(&self) -> bool {
        self.image.has_sysv_hash()
    }

    /// Whether the image has symbol versions (`DT_VERSYM` and `DT_VERDEF`).
    pub fn has_versions(&self) -> bool {
        self.image.has_versions()
    }

    /// Every defined global or weak function symbol, in table order.
    pub fn symbols(&self) -> Symbols<'a> {
        self.image.symbols(self.base)
    }

    /// Finds `name`; with `Some(version)`, only that version (or an unversioned symbol).
    /// A malformed table gives `None`.
    pub fn lookup(&self, name: &str, version: Option<&str>) -> Option<Symbol<'a>> {
        self.image.lookup(name, version, self.base).ok().flatten()
    }

    /// The architecture table matching the image's `e_machine` and class.
    pub fn arch(&self) -> Option<&'static ArchTable> {
        arch::for_machine(self.machine(), self.class())
    }

    /// Whether the image is for this process: same machine, class and byte order.
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

/// What [`Vdso::at`] confirms by `msync` before reading an image.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Confirm {
    /// The first page, then the whole length: an address a caller or `PR_GET_AUXV` gave.
    Whole,
    /// The first page only: the kernel's own mapping of the vDSO, one mapping that holds
    /// the whole image, so its first page being there says the image is (a process
    /// that unmaps `[vdso]` removes all of it). One system call, for the first call's sake.
    FirstPage,
}

/// Whether every page of `[addr, addr + len)` is known to be mapped, by
/// `msync(MS_ASYNC)`: the kernel answers `ENOMEM` for a range with a hole, and otherwise
/// does nothing (`MS_ASYNC` starts no write-back since Linux 2.6.19). Unlike `mincore`,
/// which allocates a page for every call (about 1 µs more in a fresh process), it only
/// walks the mappings.
///
/// Only success says so. `ENOMEM` (a page is not mapped), `EINVAL` (an address that is
/// not page-aligned) and any other error mean "not known to be mapped", after two more
/// tries for `EAGAIN`. The one exception is a kernel or sandbox that refuses `msync`
/// itself (`ENOSYS`, `EPERM`): that answer does not depend on the range, which then is
/// trusted as it came, from the kernel's auxiliary vector or a caller that vouches for it.
fn is_mapped(addr: usize, len: usize) -> bool {
    use linux_raw_sys::errno::{EAGAIN, ENOSYS, EPERM};
    const MS_ASYNC: usize = 1;
    for _ in 0..3 {
        // SAFETY: msync with MS_ASYNC reads and writes no memory of the process: it only
        // looks up the mappings of the range.
        let ret = unsafe { syscall(nr::__NR_msync, addr, len, MS_ASYNC, 0, 0) };
        match Errno::from_ret(ret) {
            None => return true,
            Some(e) if e.raw() == EAGAIN as i32 => continue,
            Some(e) => return e.raw() == ENOSYS as i32 || e.raw() == EPERM as i32,
        }
    }
    false
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
pub fn vdso() -> Option<Vdso<'static>> {
    match BASE.load(Ordering::Acquire) {
        0 => locate(),
        ABSENT => None,
        // SAFETY: `base` was stored only after the image there was validated; it is
        // read only once `msync` confirms its first page is still mapped (a process may
        // unmap its vDSO at any time, which removes the whole mapping).
        base => unsafe { Vdso::at(base, Confirm::FirstPage) }.ok(),
    }
}

/// The image this process's functions are bound from, read by the lean native reader
/// ([`crate::elf::native`]) for a function's first call: the one recorded (a caller's, or
/// the one a first call found), else the one the auxiliary vector names. That one is
/// recorded, as [`locate`] records it, so that the vector is read once, if it is the
/// kernel's own mapping (an address `PR_GET_AUXV` gave is confirmed whole by [`vdso`]
/// before it is recorded). `None` when there is none, it is not mapped any more, or it is
/// not a native image.
///
/// As for [`vdso`], `msync` confirms the first page is still mapped before a byte is
/// read, and the whole image too unless it is the kernel's mapping of it.
#[cold]
pub(crate) fn own() -> Option<NativeImage<'static>> {
    let (addr, confirm, found) = match BASE.load(Ordering::Acquire) {
        0 => {
            crate::elf::prefetch::parser();
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
    // SAFETY: as `read_native` requires: the address of an image (`AT_SYSINFO_EHDR` or
    // one recorded), confirmed as `confirm` says.
    let image = unsafe { read_native(addr, confirm) };
    match &image {
        Some(_) if found && confirm == Confirm::FirstPage => BASE.store(addr, Ordering::Release),
        None if found => publish_absent(),
        _ => {}
    }
    image
}

/// The lean reader on the image at `addr`, once `msync` confirmed its first page (and,
/// with [`Confirm::Whole`], the rest it reads).
///
/// # Safety
/// With [`Confirm::FirstPage`], the image's loaded segment past its first page must be
/// mapped wherever that page is (the kernel's own mapping of the vDSO).
unsafe fn read_native(addr: usize, confirm: Confirm) -> Option<NativeImage<'static>> {
    if !is_mapped(addr, MIN_PAGE) {
        return None;
    }
    // SAFETY: `msync` just confirmed the first 4 KiB at `addr`.
    let first = unsafe { core::slice::from_raw_parts(addr as *const u8, MIN_PAGE) };
    let layout = Layout::read(first)?;
    let len = layout.len();
    if confirm == Confirm::Whole && !is_mapped(addr, len) {
        return None;
    }
    // SAFETY: `len` bytes from `addr` are mapped: confirmed by `msync`, or the kernel's
    // one mapping of the whole image, whose first page is there (the caller's promise);
    // the vDSO is never written by user space.
    let bytes = unsafe { core::slice::from_raw_parts(addr as *const u8, len) };
    NativeImage::read(layout, bytes, addr)
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
    // mapped (a process may have unmapped its vDSO) before it is read, and the rest is
    // confirmed too unless it is the kernel's mapping of the whole image in this process.
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
    fn only_a_range_msync_confirms_is_mapped() {
        let hole = HOLE;
        assert!(!is_mapped(hole, 4096), "ENOMEM");
        // EINVAL (not page-aligned) used to count as mapped, and the header was read.
        assert!(!is_mapped(hole + 1, 4096), "EINVAL, unaligned");
        assert!(
            !is_mapped(usize::MAX & !4095, 8192),
            "a range past the address space"
        );
        assert!(!is_mapped(hole, 2 << 20), "a long range from the zero page");
        // Aligned to the real page size: 64 KiB on ppc64le's Debian kernel, where a
        // 4 KiB-aligned address inside a page is EINVAL, so not known to be mapped.
        let page_size = crate::auxv::lookup(crate::auxv::AT_PAGESZ).unwrap_or(4096);
        let own = [0u8; 1];
        let page = own.as_ptr() as usize & !(page_size - 1);
        assert!(is_mapped(page, 1), "this stack page");
        if let Some(v) = vdso() {
            assert!(is_mapped(v.base(), v.bytes().len()));
            assert!(!is_mapped(v.base() + 1, 4096), "EINVAL inside the vDSO");
        }
    }

    #[test]
    fn an_unaligned_caller_given_address_is_refused_before_any_read() {
        let hole = HOLE;
        for addr in [hole, hole + 1, hole + 4095] {
            // SAFETY: deliberately not a mapping: from_address must find out by msync
            // before it reads a byte (before, `hole + 1` was read, and crashed).
            let got = unsafe { Vdso::from_address(addr) };
            assert_eq!(
                got.err(),
                Some(ElfError::OutOfBounds("mapping (msync)")),
                "{addr:#x}"
            );
        }
        if let Some(v) = vdso() {
            // SAFETY: inside the vDSO, which is mapped for good; refused before parsing.
            let got = unsafe { Vdso::from_address(v.base() + 16) };
            assert_eq!(got.err(), Some(ElfError::OutOfBounds("mapping (msync)")));
        }
    }
}
