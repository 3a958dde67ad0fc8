//! The process's own vDSO read in this process's layout: the lean reader a function's
//! first call uses to bind it.
//!
//! The general reader ([`super::Image`]) takes either class and byte order at run time,
//! counts every symbol and checks every table whole, so that it can list an image of any
//! architecture; its code is about 14 KiB. A fresh process's first call fetches each line
//! of the code it runs from memory, so it runs this one instead: the same walk (header,
//! program headers, dynamic table, one hash lookup, one version check), with the layout
//! fixed at compile time, in about a fifth of the code. Every read is still checked
//! against the image's bounds: a malformed image gives `None`, never a read outside it.
//! On a well-formed native image it finds what [`super::Image::lookup`] finds (a unit
//! test compares the two on every symbol of the running vDSO and of the fixtures).

use super::hash::{gnu_hash, sysv_hash};
use super::{
    DT_GNU_HASH, DT_HASH, DT_NULL, DT_STRSZ, DT_STRTAB, DT_SYMENT, DT_SYMTAB, DT_VERDEF, DT_VERSYM,
    ET_DYN, PT_DYNAMIC, PT_LOAD,
};
use crate::arch;
use crate::elf::ElfClass;

/// A class-sized word (`Elf_Addr`, `Elf_Off`, `Elf_Xword`).
const WORD: usize = core::mem::size_of::<usize>();
/// The ELF class of this process.
const IS_64: bool = WORD == 8;
/// `EI_DATA` of this process's byte order.
const DATA: u8 = if cfg!(target_endian = "little") { 1 } else { 2 };

/// The 32-bit or 64-bit layout's number, whichever this process uses.
const fn pick(elf32: usize, elf64: usize) -> usize {
    if IS_64 {
        elf64
    } else {
        elf32
    }
}

/// `DT_HASH` words: 64-bit on s390x, 32-bit everywhere else.
const SYSV_WORD: usize = if cfg!(target_arch = "s390x") { 8 } else { 4 };

/// `N` bytes at `at`, or `None` past the end.
#[inline(always)]
fn array<const N: usize>(bytes: &[u8], at: usize) -> Option<[u8; N]> {
    bytes.get(at..at.checked_add(N)?)?.try_into().ok()
}

#[inline(always)]
fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    array(bytes, at).map(u16::from_ne_bytes)
}

#[inline(always)]
fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    array(bytes, at).map(u32::from_ne_bytes)
}

#[inline(always)]
fn word_at(bytes: &[u8], at: usize) -> Option<usize> {
    array(bytes, at).map(usize::from_ne_bytes)
}

/// `a + b * c`, checked.
#[inline(always)]
fn offset(a: usize, b: usize, c: usize) -> Option<usize> {
    a.checked_add(b.checked_mul(c)?)
}

/// The first `PT_LOAD` segment: the image's virtual addresses as offsets.
#[derive(Clone, Copy)]
struct Load {
    vaddr: usize,
    offset: usize,
    /// The smaller of `p_filesz` and `p_memsz`: the file-backed part.
    size: usize,
    /// `p_offset + p_filesz`: how much of the image the reader may read.
    end: usize,
}

impl Load {
    /// The offset of a virtual address inside the segment's file-backed part.
    #[inline(always)]
    fn to_offset(self, vaddr: usize) -> Option<usize> {
        let rel = vaddr
            .checked_sub(self.vaddr)
            .filter(|&rel| rel < self.size)?;
        self.offset.checked_add(rel).filter(|&off| off < self.end)
    }
}

/// What the header and program headers say: checked in the first page alone.
#[derive(Clone, Copy)]
pub(crate) struct Layout {
    load: Load,
    dynamic: usize,
}

impl Layout {
    /// Checks the header of a native shared object in `first` (the image's first
    /// bytes) and reads its program headers from there.
    #[inline(never)] // prefetched by its address: see `prefetch`
    pub(crate) fn read(first: &[u8]) -> Option<Layout> {
        let native = arch::NATIVE;
        let ident: [u8; 16] = array(first, 0)?;
        let class = if IS_64 { 2 } else { 1 };
        if ident[..4] != *b"\x7fELF" || ident[4] != class || ident[5] != DATA || ident[6] != 1 {
            return None;
        }
        if native.class
            != if IS_64 {
                ElfClass::Elf64
            } else {
                ElfClass::Elf32
            }
            || u16_at(first, 16)? != ET_DYN
            || u16_at(first, 18)? != native.machine
            || u32_at(first, 20)? != 1
        {
            return None;
        }
        let phentsize = pick(32, 56);
        if usize::from(u16_at(first, pick(42, 54))?) != phentsize {
            return None;
        }
        let phoff = word_at(first, pick(28, 32))?;
        let phnum = usize::from(u16_at(first, pick(44, 56))?);
        let (mut load, mut dynamic) = (None, None);
        for i in 0..phnum {
            let ph = offset(phoff, i, phentsize)?;
            let field = |elf32, elf64| word_at(first, ph.checked_add(pick(elf32, elf64))?);
            match u32_at(first, ph)? {
                PT_LOAD if load.is_none() => {
                    let (offset, filesz) = (field(4, 8)?, field(16, 32)?);
                    load = Some(Load {
                        vaddr: field(8, 16)?,
                        offset,
                        size: filesz.min(field(20, 40)?),
                        end: offset.checked_add(filesz)?,
                    });
                }
                PT_DYNAMIC => dynamic = Some(field(4, 8)?),
                _ => {}
            }
        }
        Some(Layout {
            load: load?,
            dynamic: dynamic?,
        })
    }

    /// How many bytes from the start the reader reads: the loaded segment's file part.
    pub(crate) fn len(&self) -> usize {
        self.load.end
    }
}

/// A native image's dynamic symbol tables, as offsets into its bytes.
#[derive(Clone, Copy)]
pub(crate) struct NativeImage<'a> {
    bytes: &'a [u8],
    base: usize,
    load: Load,
    symtab: usize,
    syment: usize,
    strtab: usize,
    strsz: usize,
    gnu_hash: Option<usize>,
    sysv_hash: Option<usize>,
    /// `DT_VERSYM` and `DT_VERDEF`, usable only as a pair (as by ld.so).
    versions: Option<(usize, usize)>,
}

impl<'a> NativeImage<'a> {
    /// Reads the dynamic table of the image `bytes` (at least `layout.len()` of them),
    /// which lies at `base` in this process.
    #[inline(never)] // prefetched by its address
    pub(crate) fn read(layout: Layout, bytes: &'a [u8], base: usize) -> Option<NativeImage<'a>> {
        let load = layout.load;
        let bytes = bytes.get(..load.end)?;
        let (mut symtab, mut strtab, mut strsz, mut syment) = (None, None, None, None);
        let (mut sysv_hash, mut gnu_hash, mut versym, mut verdef) = (None, None, None, None);
        let mut entry = layout.dynamic;
        loop {
            let tag = word_at(bytes, entry)? as u64;
            let val = word_at(bytes, entry.checked_add(WORD)?)?;
            entry = offset(entry, 2, WORD)?;
            let slot = match tag {
                DT_NULL => break,
                DT_STRSZ => {
                    strsz = Some(val);
                    continue;
                }
                DT_SYMENT => {
                    syment = Some(val);
                    continue;
                }
                DT_SYMTAB => &mut symtab,
                DT_STRTAB => &mut strtab,
                DT_HASH => &mut sysv_hash,
                DT_GNU_HASH => &mut gnu_hash,
                DT_VERSYM => &mut versym,
                DT_VERDEF => &mut verdef,
                _ => continue,
            };
            *slot = Some(load.to_offset(val)?);
        }
        let strtab = strtab?;
        let strsz = strsz.unwrap_or(bytes.len().saturating_sub(strtab));
        bytes.get(strtab..strtab.checked_add(strsz)?)?;
        let syment = syment.unwrap_or(pick(16, 24));
        if syment < pick(16, 24) || (gnu_hash.is_none() && sysv_hash.is_none()) {
            return None;
        }
        Some(NativeImage {
            bytes,
            base,
            load,
            symtab: symtab?,
            syment,
            strtab,
            strsz,
            gnu_hash,
            sysv_hash,
            versions: versym.zip(verdef),
        })
    }

    /// The address of `name` defined with `version` (or unversioned), and whether the
    /// image gave it that version: what [`super::Image::lookup`] finds.
    #[inline(never)] // prefetched by its address
    pub(crate) fn lookup(&self, name: &str, version: &str) -> Option<(usize, bool)> {
        let b = self.bytes;
        let name = name.as_bytes();
        if let Some(at) = self.gnu_hash {
            let nbuckets = u32_at(b, at)? as usize;
            let symoffset = u32_at(b, at.checked_add(4)?)? as usize;
            let bloom_words = u32_at(b, at.checked_add(8)?)? as usize;
            let buckets = offset(at.checked_add(16)?, bloom_words, WORD)?;
            let chains = offset(buckets, nbuckets, 4)?;
            let h = gnu_hash(name);
            let bucket = (h as usize).checked_rem(nbuckets)?;
            let mut idx = u32_at(b, offset(buckets, bucket, 4)?)? as usize;
            if idx < symoffset {
                return None;
            }
            // Each step reads a new word further on, so the walk ends within the image.
            loop {
                let link = u32_at(b, offset(chains, idx.checked_sub(symoffset)?, 4)?)?;
                if (link | 1) == (h | 1) {
                    if let Some(found) = self.symbol(idx, name, version)? {
                        return Some(found);
                    }
                }
                if link & 1 == 1 {
                    return None;
                }
                idx = idx.checked_add(1)?;
            }
        }
        let at = self.sysv_hash?;
        let entry = |i: usize| -> Option<usize> {
            let off = offset(at, i, SYSV_WORD)?;
            if SYSV_WORD == 8 {
                array(b, off).map(u64::from_ne_bytes)?.try_into().ok()
            } else {
                u32_at(b, off).map(|v| v as usize)
            }
        };
        let (nbucket, nchain) = (entry(0)?, entry(1)?);
        let h = sysv_hash(name);
        let mut idx = entry(2usize.checked_add((h as usize).checked_rem(nbucket)?)?)?;
        for _ in 0..nchain {
            if idx == 0 || idx >= nchain {
                break;
            }
            if let Some(found) = self.symbol(idx, name, version)? {
                return Some(found);
            }
            idx = entry(offset(2usize.checked_add(nbucket)?, 1, idx)?)?;
        }
        None
    }

    /// Symbol `idx` if it is a defined global or weak `STT_FUNC` / `STT_NOTYPE` symbol
    /// named `name` in the image, with `version` or none: `Some(None)` for another
    /// symbol, `None` for an entry that cannot be read.
    #[inline(never)] // prefetched by its address
    pub(super) fn symbol(
        &self,
        idx: usize,
        name: &[u8],
        version: &str,
    ) -> Option<Option<(usize, bool)>> {
        let b = self.bytes;
        let sym = offset(self.symtab, idx, self.syment)?;
        let name_at = u32_at(b, sym)? as usize;
        let info = *b.get(sym.checked_add(pick(12, 4))?)?;
        let shndx = u16_at(b, sym.checked_add(pick(14, 6))?)?;
        let value = word_at(b, sym.checked_add(pick(4, 8))?)?;
        let (bind, kind) = (info >> 4, info & 0xf);
        if shndx == 0 || !matches!(kind, 0 | 2) || !matches!(bind, 1 | 2) {
            return Some(None);
        }
        if !self.names(name_at, name)? {
            return Some(None);
        }
        let Some(code) = self.load.to_offset(value) else {
            return Some(None);
        };
        let versioned = match self.version_is(idx, version)? {
            Some(false) => return Some(None),
            Some(true) => true,
            None => false,
        };
        Some(Some((self.base.checked_add(code)?, versioned)))
    }

    /// Whether the string at `at` in the string table is `name`.
    #[inline(always)]
    fn names(&self, at: usize, name: &[u8]) -> Option<bool> {
        // A string that would end past the table is not `name`, whatever it is.
        if at.checked_add(name.len())? >= self.strsz {
            return Some(false);
        }
        let start = self.strtab.checked_add(at)?;
        let s = self.bytes.get(start..=start.checked_add(name.len())?)?;
        Some(s[..name.len()] == *name && s[name.len()] == 0)
    }

    /// Whether symbol `idx`'s version is `version`; `None` inside when it has none
    /// (an unversioned image or symbol, or a version index no definition names).
    #[inline(always)]
    fn version_is(&self, idx: usize, version: &str) -> Option<Option<bool>> {
        let Some((versym, mut def)) = self.versions else {
            return Some(None);
        };
        let b = self.bytes;
        let ndx = u16_at(b, offset(versym, idx, 2)?)? & 0x7fff;
        if ndx <= 1 {
            return Some(None);
        }
        // Elf_Verdef: vd_flags at 2, vd_ndx at 4, vd_aux at 12, vd_next at 16 (a
        // bounded chain: a vDSO has two or three).
        for _ in 0..256 {
            let flags = u16_at(b, def.checked_add(2)?)?;
            let vd_ndx = u16_at(b, def.checked_add(4)?)?;
            if flags & 1 == 0 && vd_ndx & 0x7fff == ndx {
                let aux = def.checked_add(u32_at(b, def.checked_add(12)?)? as usize)?;
                let name_at = u32_at(b, aux)? as usize;
                return self.names(name_at, version.as_bytes()).map(Some);
            }
            let next = u32_at(b, def.checked_add(16)?)? as usize;
            if next == 0 {
                break;
            }
            def = def.checked_add(next)?;
        }
        Some(None)
    }
}

#[cfg(test)]
mod tests;
