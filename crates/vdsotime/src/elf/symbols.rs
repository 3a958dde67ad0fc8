//! Dynamic symbols: reading `Elf*_Sym` entries, keeping the ones a caller can use,
//! and finding one by name and version.

use super::reader::{offset, Any, Form};
use super::{ElfError, Image};

const SHN_UNDEF: u16 = 0;
const STT_NOTYPE: u8 = 0;
const STT_FUNC: u8 = 2;
const STB_GLOBAL: u8 = 1;
const STB_WEAK: u8 = 2;

/// A defined, exported function in an image.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Symbol<'a> {
    /// The symbol name, e.g. `__vdso_clock_gettime`.
    pub name: &'a str,
    /// Its version node, e.g. `LINUX_2.6`; `None` in an image without versions.
    pub version: Option<&'a str>,
    /// Offset of the code in the image bytes (odd for Thumb code on arm).
    pub offset: usize,
    /// Where the code is in this process: image base plus `offset`.
    pub address: usize,
}

impl<'a, F: Form> Image<'a, F> {
    /// Symbol `idx`'s name (an index into the string table) and code offset, if it is a
    /// defined global or weak `STT_FUNC` / `STT_NOTYPE` symbol (ppc64 vDSOs use
    /// `STT_NOTYPE`) whose code lies inside the image; `None` for any other symbol (an
    /// absolute or out-of-image value is no code we can call).
    #[inline(always)]
    fn entry(&self, idx: usize) -> Result<Option<(usize, usize)>, F::Error> {
        let sym = offset(self.symtab, idx, self.syment)?;
        // In both classes the fields read lie in the entry's first 16 bytes, the last
        // one ending them (ELF64's st_size, past them, is not read): one bound for them
        // all, then reads at fixed offsets within it.
        let r = self.r.sub(sym, 16, "symbol")?;
        let name = r.u32(0, "symbol")? as usize;
        // st_info, st_shndx and st_value sit at different offsets in the two classes.
        let info = r.u8(r.pick(12, 4), "symbol")?;
        let shndx = r.u16(r.pick(14, 6), "symbol")?;
        let value = r.word(r.pick(4, 8), "symbol")?;
        let (bind, kind) = (info >> 4, info & 0xf);
        if shndx == SHN_UNDEF
            || !matches!(kind, STT_FUNC | STT_NOTYPE)
            || !matches!(bind, STB_GLOBAL | STB_WEAK)
        {
            return Ok(None);
        }
        Ok(self.value_to_offset(value).map(|code| (name, code)))
    }

    /// Finds `name`, and if `version` is given, with that version (an unversioned
    /// image or symbol matches any version, as the dynamic linker allows). No symbol
    /// has an empty name. An entry that cannot be read ends the lookup with its error.
    #[inline(always)]
    pub(crate) fn lookup(
        &self,
        name: &str,
        version: Option<&str>,
        base: usize,
    ) -> Result<Option<Symbol<'a>>, F::Error> {
        if name.is_empty() {
            return Ok(None);
        }
        self.candidates(name.as_bytes(), |idx| {
            let Some((name_at, code)) = self.entry(idx)? else {
                return Ok(None);
            };
            let Some(name) = self.named(name_at, name) else {
                return Ok(None);
            };
            let version = match (self.version_of(idx)?, version) {
                (None, _) => None,
                (Some(at), Some(want)) => match self.named(at, want) {
                    Some(v) => Some(v),
                    None => return Ok(None), // another version
                },
                (Some(at), None) => Some(self.version_text(at)?),
            };
            self.found(name, version, code, base).map(Some)
        })
    }

    /// The version name at `at` in the string table, for a lookup that asked for none
    /// (never the first call's, which asks for its architecture's version).
    #[cold]
    #[inline(never)]
    fn version_text(&self, at: usize) -> Result<&'a str, F::Error> {
        Ok(text(self.string(at)?, "version name")?)
    }

    /// The symbol found at `code`, at `base` in this process.
    fn found(
        &self,
        name: &'a str,
        version: Option<&'a str>,
        code: usize,
        base: usize,
    ) -> Result<Symbol<'a>, F::Error> {
        let address = base
            .checked_add(code)
            .ok_or(ElfError::OutOfBounds("symbol address"))?;
        Ok(Symbol {
            name,
            version,
            offset: code,
            address,
        })
    }

    /// The string at `at` in the string table if it is `expected`: a string that is not
    /// is read no further than `expected`'s length and its NUL.
    #[inline(always)]
    fn named(&self, at: usize, expected: &str) -> Option<&'a str> {
        let nul = at.checked_add(expected.len())?;
        if nul >= self.strsz {
            return None;
        }
        let s = self
            .r
            .bytes
            .get(self.strtab.checked_add(at)?..=self.strtab.checked_add(nul)?)?;
        let (&end, bytes) = s.split_last()?;
        if end != 0 || bytes != expected.as_bytes() {
            return None;
        }
        // SAFETY: the bytes equal those of a `str`, so they are valid UTF-8.
        Some(unsafe { core::str::from_utf8_unchecked(bytes) })
    }
}

impl<'a> Image<'a, Any> {
    /// Symbol `idx` if it is usable (see `entry`), with a non-empty UTF-8 name and
    /// version: what [`Symbols`] lists.
    fn listed(&self, idx: usize, base: usize) -> Result<Option<Symbol<'a>>, ElfError> {
        let Some((name_at, code)) = self.entry(idx)? else {
            return Ok(None);
        };
        // Names and versions are ASCII in every vDSO; anything else is not ours to call.
        let Ok(name) = text(self.string(name_at)?, "symbol name") else {
            return Ok(None);
        };
        if name.is_empty() {
            return Ok(None);
        }
        let version = match self.version_of(idx)? {
            Some(at) => Some(text(self.string(at)?, "version name")?),
            None => None,
        };
        self.found(name, version, code, base).map(Some)
    }

    /// Iterates the usable symbols of the first `nsyms` in table order.
    pub(crate) fn symbols(&self, nsyms: usize, base: usize) -> Symbols<'a> {
        Symbols {
            image: *self,
            nsyms,
            base,
            next: 0,
        }
    }
}

/// `bytes` as a `str`, or an error naming `what` if they are not UTF-8.
fn text<'b>(bytes: &'b [u8], what: &'static str) -> Result<&'b str, ElfError> {
    core::str::from_utf8(bytes).map_err(|_| ElfError::OutOfBounds(what))
}

/// Iterator over an image's usable symbols (see [`crate::Vdso::symbols`]). Entries that
/// cannot be read are skipped.
#[derive(Clone, Debug)]
pub struct Symbols<'a> {
    image: Image<'a, Any>,
    nsyms: usize,
    base: usize,
    next: usize,
}

impl<'a> Iterator for Symbols<'a> {
    type Item = Symbol<'a>;

    fn next(&mut self) -> Option<Symbol<'a>> {
        while self.next < self.nsyms {
            let idx = self.next;
            self.next = idx.saturating_add(1); // below `nsyms`, so it never saturates
                                               // An unreadable entry is skipped like an unusable one, so that every symbol
                                               // `lookup` can return is also listed here.
            if let Ok(Some(sym)) = self.image.listed(idx, self.base) {
                return Some(sym);
            }
        }
        None
    }
}
