//! A reader of an in-memory ELF shared object: header, program headers, the dynamic
//! table, both symbol hash tables and symbol versions. It knows ELF, not the vDSO.
//!
//! The model is the kernel's `tools/testing/selftests/vDSO/parse_vdso.c`, with every
//! read bounds-checked: any byte string gives a value or an [`ElfError`], never a panic
//! or a read outside the slice. ELF32 and ELF64, either byte order, are accepted on any
//! host, so one architecture's tests can parse every other's images.
//!
//! One implementation reads every image, generic over its `Form`: `Any` takes the
//! class and byte order the header gives, at run time ([`crate::Vdso::parse`]); `Native`
//! is this process's layout, fixed at compile time, and reads the process's own vDSO on a
//! function's first call (`NativeImage`), where the code run is fetched from memory line
//! by line. Validation is lazy: `Image::open` checks what every lookup needs (the
//! header, the program headers, the dynamic table, the string table's bounds) and each
//! lookup checks what it reads; `Image::check` also counts the symbols and checks every
//! table whole, for listing them. A lookup gives the same answer either way.
//!
//! No offset arithmetic here may wrap or panic: clippy's `arithmetic_side_effects` is
//! denied for the whole module, so every sum and product goes through a checked helper.
#![deny(clippy::arithmetic_side_effects)]

mod hash;
pub mod machine;
mod native_image;
pub(crate) mod prefetch;
mod program;
mod reader;
mod symbols;
mod version;

#[cfg(fuzzing)]
#[doc(hidden)]
pub use native_image::fuzz_lookup;
pub(crate) use native_image::NativeImage;
pub use program::{Program, Span};
pub(crate) use reader::{Any, Form, Native};
pub use symbols::{Symbol, Symbols};
pub use version::Versions;

use core::fmt;
use reader::{offset, plus, to_usize, Reader};

/// ELF file class: word size of the image (not necessarily of the host).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElfClass {
    /// `ELFCLASS32`.
    Elf32,
    /// `ELFCLASS64`.
    Elf64,
}

/// Byte order of the image's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endian {
    /// `ELFDATA2LSB`.
    Little,
    /// `ELFDATA2MSB`.
    Big,
}

/// Why an image was refused. Every variant says what is wrong; none loses the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ElfError {
    /// Shorter than an ELF header.
    TooShort,
    /// The first four bytes are not `\x7fELF`.
    BadMagic,
    /// `EI_CLASS` is neither 32 nor 64-bit.
    BadClass(u8),
    /// `EI_DATA` is neither little nor big endian.
    BadByteOrder(u8),
    /// `EI_VERSION` or `e_version` is not 1.
    BadVersion,
    /// `e_type` is not `ET_DYN`: a vDSO is a shared object.
    NotSharedObject(u16),
    /// `e_phentsize` (or `DT_SYMENT`) does not match the class.
    BadEntrySize(&'static str),
    /// No `PT_LOAD` segment.
    NoLoadSegment,
    /// No `PT_DYNAMIC` segment.
    NoDynamicSegment,
    /// A required dynamic entry (`DT_SYMTAB`, `DT_STRTAB`) is missing.
    MissingDynamicEntry(&'static str),
    /// Neither `DT_GNU_HASH` nor `DT_HASH`: the symbols cannot be counted.
    NoHashTable,
    /// An address lies outside the loaded segment.
    AddressOutsideSegment(&'static str),
    /// A table or string runs past the end of the image (the name says which).
    OutOfBounds(&'static str),
    /// A well-formed image for another machine or class than this process's.
    ForeignMachine {
        /// `e_machine` of the image.
        machine: u16,
        /// Its class.
        class: ElfClass,
    },
}

impl fmt::Display for ElfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ElfError::TooShort => f.write_str("image shorter than an ELF header"),
            ElfError::BadMagic => f.write_str("not an ELF image (bad magic)"),
            ElfError::BadClass(c) => write!(f, "unknown ELF class {c}"),
            ElfError::BadByteOrder(d) => write!(f, "unknown ELF byte order {d}"),
            ElfError::BadVersion => f.write_str("unsupported ELF version"),
            ElfError::NotSharedObject(t) => write!(f, "e_type {t} is not ET_DYN"),
            ElfError::BadEntrySize(what) => write!(f, "{what} has the wrong entry size"),
            ElfError::NoLoadSegment => f.write_str("no PT_LOAD segment"),
            ElfError::NoDynamicSegment => f.write_str("no PT_DYNAMIC segment"),
            ElfError::MissingDynamicEntry(what) => write!(f, "dynamic table lacks {what}"),
            ElfError::NoHashTable => f.write_str("neither DT_GNU_HASH nor DT_HASH present"),
            ElfError::AddressOutsideSegment(what) => write!(f, "{what} points outside PT_LOAD"),
            ElfError::OutOfBounds(what) => write!(f, "{what} runs past the end of the image"),
            ElfError::ForeignMachine { machine, class } => {
                write!(
                    f,
                    "image is for e_machine {machine} ({class:?}), not this process"
                )
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for ElfError {}

const ET_DYN: u16 = 3;
const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const DT_NULL: u64 = 0;
const DT_HASH: u64 = 4;
const DT_STRTAB: u64 = 5;
const DT_SYMTAB: u64 = 6;
const DT_STRSZ: u64 = 10;
const DT_SYMENT: u64 = 11;
const DT_GNU_HASH: u64 = 0x6fff_fef5;
const DT_VERSYM: u64 = 0x6fff_fff0;
const DT_VERDEF: u64 = 0x6fff_fffc;
/// `EM_S390`: its `DT_HASH` words are 64-bit on s390x (the one such Linux arch we target).
const EM_S390: u16 = 22;

/// The ELF header fields this reader uses.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Header<F> {
    pub(crate) form: F,
    pub(crate) machine: u16,
    phoff: usize,
    phnum: usize,
    shoff: usize,
    shnum: usize,
    shentsize: usize,
}

/// The first `PT_LOAD` segment, which maps the image's virtual addresses to file
/// offsets, and where the (last) `PT_DYNAMIC` segment says the dynamic table is.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Load {
    vaddr: u64,
    offset: u64,
    memsz: u64,
    filesz: u64,
    dynamic: Option<u64>,
}

impl Load {
    /// The file offset of a virtual address inside the segment's file-backed part, which
    /// must also lie inside the `len` bytes held: the segment's sizes come from the image
    /// and bound nothing by themselves. `what` names the address in the error.
    #[inline(always)]
    fn to_offset(self, vaddr: u64, len: usize, what: &'static str) -> Result<usize, ElfError> {
        let rel = vaddr
            .checked_sub(self.vaddr)
            .filter(|&rel| rel < self.memsz.min(self.filesz))
            .ok_or(ElfError::AddressOutsideSegment(what))?;
        self.offset
            .checked_add(rel)
            .and_then(|off| usize::try_from(off).ok())
            .filter(|&off| off < len)
            .ok_or(ElfError::OutOfBounds(what))
    }
}

impl<F: Form> Header<F> {
    /// Validates `e_ident`, `e_type`, `e_version` and `e_phentsize`, and that the form
    /// `F` reads this class, byte order and machine ([`ElfError::ForeignMachine`] if not).
    #[inline(never)] // prefetched by its address (the native instantiation): see `vdso::this_process`
    pub(crate) fn parse(bytes: &[u8]) -> Result<Header<F>, F::Error> {
        let (header, e_type) = Self::read(bytes)?;
        if e_type != ET_DYN {
            return Err(ElfError::NotSharedObject(e_type).into());
        }
        Ok(header)
    }

    /// [`Header::parse`] for a file of any `e_type` (an executable's too), and its type.
    #[inline(always)]
    fn read(bytes: &[u8]) -> Result<(Header<F>, u16), F::Error> {
        let ident = bytes.get(..20).ok_or(ElfError::TooShort)?;
        if ident[..4] != *b"\x7fELF" {
            return Err(ElfError::BadMagic.into());
        }
        let class = match ident[4] {
            1 => ElfClass::Elf32,
            2 => ElfClass::Elf64,
            c => return Err(ElfError::BadClass(c).into()),
        };
        let (endian, machine) = match ident[5] {
            1 => (Endian::Little, u16::from_le_bytes([ident[18], ident[19]])),
            2 => (Endian::Big, u16::from_be_bytes([ident[18], ident[19]])),
            d => return Err(ElfError::BadByteOrder(d).into()),
        };
        let form =
            F::of(class, endian, machine).ok_or(ElfError::ForeignMachine { machine, class })?;
        let r = Reader { bytes, form };
        if bytes.len() < r.pick(52, 64) {
            return Err(ElfError::TooShort.into());
        }
        if ident[6] != 1 || r.u32(20, "e_version")? != 1 {
            return Err(ElfError::BadVersion.into());
        }
        let e_type = r.u16(16, "e_type")?;
        let field = |elf32, elf64| r.pick(elf32, elf64);
        if usize::from(r.u16(field(42, 54), "e_phentsize")?) != r.pick(32, 56) {
            return Err(ElfError::BadEntrySize("e_phentsize").into());
        }
        let header = Header {
            form,
            machine,
            phoff: to_usize(r.word(field(28, 32), "e_phoff")?, "e_phoff")?,
            phnum: usize::from(r.u16(field(44, 56), "e_phnum")?),
            shoff: to_usize(r.word(field(32, 40), "e_shoff")?, "e_shoff")?,
            shnum: usize::from(r.u16(field(48, 60), "e_shnum")?),
            shentsize: usize::from(r.u16(field(46, 58), "e_shentsize")?),
        };
        Ok((header, e_type))
    }

    pub(crate) fn class(&self) -> ElfClass {
        self.form.class()
    }

    pub(crate) fn endian(&self) -> Endian {
        self.form.endian()
    }

    fn reader<'a>(&self, bytes: &'a [u8]) -> Reader<'a, F> {
        Reader {
            bytes,
            form: self.form,
        }
    }

    /// Calls `f(p_type, phdr)` for each program header, all of which must be in bounds;
    /// `phdr` reads the header's own bytes, so that a field read at a fixed offset inside
    /// it needs no bound of its own.
    fn each_phdr<'r>(
        &self,
        r: &Reader<'r, F>,
        mut f: impl FnMut(u32, &Reader<'r, F>) -> Result<(), F::Error>,
    ) -> Result<(), F::Error> {
        let size = r.pick(32, 56);
        let mut rest = r.slice(self.phoff, offset(0, self.phnum, size)?, "program headers")?;
        for _ in 0..self.phnum {
            let (Some(ph), Some(tail)) = (rest.get(..size), rest.get(size..)) else {
                return Err(ElfError::OutOfBounds("program headers").into());
            };
            rest = tail;
            let ph = self.reader(ph);
            f(ph.u32(0, "p_type")?, &ph)?;
        }
        Ok(())
    }

    fn first_load(&self, r: &Reader<'_, F>) -> Result<Load, F::Error> {
        let (mut load, mut dynamic) = (None, None);
        self.each_phdr(r, |p_type, ph| {
            let at = |elf32, elf64, what| ph.word(ph.pick(elf32, elf64), what);
            if p_type == PT_LOAD && load.is_none() {
                load = Some((
                    at(8, 16, "p_vaddr")?,
                    at(4, 8, "p_offset")?,
                    at(20, 40, "p_memsz")?,
                    at(16, 32, "p_filesz")?,
                ));
            } else if p_type == PT_DYNAMIC {
                dynamic = Some(at(4, 8, "p_offset")?);
            }
            Ok(())
        })?;
        let (vaddr, offset, memsz, filesz) = load.ok_or(ElfError::NoLoadSegment)?;
        Ok(Load {
            vaddr,
            offset,
            memsz,
            filesz,
            dynamic,
        })
    }

    /// How many bytes from the start the image occupies: its loaded segment and its
    /// section headers (which `readelf` wants, though nothing here reads them). Used to
    /// size the live vDSO, whose length the kernel does not tell us. Also gives the
    /// segment, for [`Image::open`].
    #[inline(never)] // prefetched by its address (the native instantiation): see `vdso::this_process`
    pub(crate) fn extent(&self, bytes: &[u8]) -> Result<(Load, usize), F::Error> {
        let r = self.reader(bytes);
        let load = self.first_load(&r)?;
        let load_end = load
            .offset
            .checked_add(load.filesz)
            .ok_or(ElfError::OutOfBounds("PT_LOAD"))?;
        let sections_end = offset(self.shoff, self.shnum, self.shentsize)?;
        Ok((load, to_usize(load_end, "PT_LOAD")?.max(sections_end)))
    }
}

/// An image whose dynamic symbol tables are located, as offsets into its bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Image<'a, F> {
    r: Reader<'a, F>,
    pub(crate) header: Header<F>,
    load: Load,
    symtab: usize,
    syment: usize,
    strtab: usize,
    strsz: usize,
    sysv_hash: Option<usize>,
    gnu_hash: Option<usize>,
    versym: Option<usize>,
    verdef: Option<usize>,
}

impl<'a> Image<'a, Any> {
    /// Parses `bytes` in whatever layout they have, and checks every table whole:
    /// the image and its number of dynamic symbols.
    pub(crate) fn parse(bytes: &'a [u8]) -> Result<(Image<'a, Any>, usize), ElfError> {
        let header = Header::parse(bytes)?;
        let load = header.first_load(&header.reader(bytes))?;
        let image = Image::open(header, load, bytes)?;
        Ok((image, image.check()?))
    }
}

impl<'a, F: Form> Image<'a, F> {
    /// Locates the dynamic tables, for a header and a first `PT_LOAD` already read from
    /// the same first bytes (to size the live vDSO), so that the header is parsed once.
    /// The header's check of the length is made again on `bytes`; every read below is
    /// bounded by them. The symbol, hash and
    /// version tables are checked as lookups read them (see [`Image::check`]).
    #[inline(never)] // prefetched by its address (the native instantiation): see `vdso::this_process`
    pub(crate) fn open(header: Header<F>, load: Load, bytes: &'a [u8]) -> Result<Self, F::Error> {
        let r = header.reader(bytes);
        if bytes.len() < r.pick(52, 64) {
            return Err(ElfError::TooShort.into());
        }
        // Dynamic entries hold virtual addresses; the image is laid out as PT_LOAD says.
        let to_offset = |vaddr, what| load.to_offset(vaddr, bytes.len(), what);

        let dynamic = load.dynamic.ok_or(ElfError::NoDynamicSegment)?;
        let dynamic = to_usize(dynamic, "PT_DYNAMIC")?;

        let (mut symtab, mut strtab, mut strsz, mut syment) = (None, None, None, None);
        let (mut sysv_hash, mut gnu_hash, mut versym, mut verdef) = (None, None, None, None);
        // Each entry is a tag word then a value word; the walk ends at DT_NULL or at the
        // first entry that is not in the bytes.
        let word = r.pick(4, 8);
        let pair = r.pick(8, 16);
        let mut entry = dynamic;
        loop {
            let e = r.sub(entry, pair, "dynamic table")?;
            let (tag, val) = (e.word(0, "dynamic table")?, e.word(word, "dynamic table")?);
            entry = plus(entry, pair)?;
            // An address is mapped to its offset as it is read, by one call for them all.
            let (slot, what, address) = match tag {
                DT_NULL => break,
                DT_STRSZ => (&mut strsz, "DT_STRSZ", false),
                DT_SYMENT => (&mut syment, "DT_SYMENT", false),
                DT_SYMTAB => (&mut symtab, "DT_SYMTAB", true),
                DT_STRTAB => (&mut strtab, "DT_STRTAB", true),
                DT_HASH => (&mut sysv_hash, "DT_HASH", true),
                DT_GNU_HASH => (&mut gnu_hash, "DT_GNU_HASH", true),
                DT_VERSYM => (&mut versym, "DT_VERSYM", true),
                DT_VERDEF => (&mut verdef, "DT_VERDEF", true),
                _ => continue,
            };
            *slot = Some(if address {
                to_offset(val, what)?
            } else {
                to_usize(val, what)?
            });
        }

        let symtab = symtab.ok_or(ElfError::MissingDynamicEntry("DT_SYMTAB"))?;
        let strtab = strtab.ok_or(ElfError::MissingDynamicEntry("DT_STRTAB"))?;
        // Without DT_STRSZ, strings may run to the end of the image (still bounded).
        let strsz = strsz.unwrap_or(bytes.len().saturating_sub(strtab));
        r.slice(strtab, strsz, "DT_STRTAB")?;
        let natural = r.pick(16, 24);
        let syment = syment.unwrap_or(natural);
        if syment < natural {
            return Err(ElfError::BadEntrySize("DT_SYMENT").into());
        }
        if gnu_hash.is_none() && sysv_hash.is_none() {
            return Err(ElfError::NoHashTable.into());
        }
        Ok(Image {
            r,
            header,
            load,
            symtab,
            syment,
            strtab,
            strsz,
            sysv_hash,
            gnu_hash,
            // Versions are usable only as a pair; either alone is ignored, as by ld.so.
            versym: versym.filter(|_| verdef.is_some()),
            verdef: verdef.filter(|_| versym.is_some()),
        })
    }

    /// Counts the dynamic symbols and checks that the symbol and version tables hold
    /// them all: what listing every symbol needs, and no lookup does. Gives the count.
    pub(crate) fn check(&self) -> Result<usize, F::Error> {
        let nsyms = self.count_symbols()?;
        self.r
            .slice(self.symtab, offset(0, nsyms, self.syment)?, "DT_SYMTAB")?;
        if let Some(versym) = self.versym {
            self.r.slice(versym, offset(0, nsyms, 2)?, "DT_VERSYM")?;
        }
        Ok(nsyms)
    }

    /// The image bytes.
    pub(crate) fn bytes(&self) -> &'a [u8] {
        self.r.bytes
    }

    pub(crate) fn has_gnu_hash(&self) -> bool {
        self.gnu_hash.is_some()
    }

    pub(crate) fn has_sysv_hash(&self) -> bool {
        self.sysv_hash.is_some()
    }

    pub(crate) fn has_versions(&self) -> bool {
        self.verdef.is_some()
    }

    /// `DT_HASH` words are 32-bit, except on 64-bit s390 where they are 64-bit. Known at
    /// compile time for the [`Native`] form, whose machine is.
    #[inline(always)]
    fn sysv_word(&self) -> usize {
        let machine = self.header.form.machine().unwrap_or(self.header.machine);
        if machine == EM_S390 && self.header.class() == ElfClass::Elf64 {
            8
        } else {
            4
        }
    }

    /// Maps a symbol's `st_value` to an offset in the image.
    #[inline(always)]
    fn value_to_offset(&self, value: u64) -> Option<usize> {
        self.load
            .to_offset(value, self.r.bytes.len(), "st_value")
            .ok()
    }
}
