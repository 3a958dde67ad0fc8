//! Dynamic symbols: reading `Elf*_Sym` entries, keeping the ones a caller can use,
//! and finding one by name and version.

use super::reader::{offset, plus};
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

impl<'a> Image<'a> {
    /// Symbol `idx` if it is a defined global or weak `STT_FUNC` / `STT_NOTYPE` symbol
    /// (ppc64 vDSOs use `STT_NOTYPE`) whose code lies inside the image. `expected` is the
    /// name and version a lookup wants, if any: text equal to them needs no UTF-8 check.
    pub(super) fn symbol(
        &self,
        idx: usize,
        base: usize,
        expected: (Option<&str>, Option<&str>),
    ) -> Result<Option<Symbol<'a>>, ElfError> {
        let r = &self.r;
        let sym = offset(self.symtab, idx, self.syment)?;
        let name = r.u32(sym, "symbol")? as usize;
        // st_info, st_shndx and st_value sit at different offsets in the two classes.
        let field = |elf32, elf64| plus(sym, r.pick(elf32, elf64));
        let info = r.u8(field(12, 4)?, "symbol")?;
        let shndx = r.u16(field(14, 6)?, "symbol")?;
        let value = r.word(field(4, 8)?, "symbol")?;
        let (bind, kind) = (info >> 4, info & 0xf);
        if shndx == SHN_UNDEF
            || !matches!(kind, STT_FUNC | STT_NOTYPE)
            || !matches!(bind, STB_GLOBAL | STB_WEAK)
        {
            return Ok(None);
        }
        let name = self.string(name)?;
        let Some(code) = self.value_to_offset(value) else {
            return Ok(None); // an absolute or out-of-image value is no code we can call
        };
        // Names and versions are ASCII in every vDSO; anything else is not ours to call.
        let Some(name) = text(name, expected.0) else {
            return Ok(None);
        };
        if name.is_empty() {
            return Ok(None);
        }
        let version = match self.version_of(idx)? {
            Some(v) => Some(text(v, expected.1).ok_or(ElfError::OutOfBounds("version name"))?),
            None => None,
        };
        let address = base
            .checked_add(code)
            .ok_or(ElfError::OutOfBounds("symbol address"))?;
        Ok(Some(Symbol {
            name,
            version,
            offset: code,
            address,
        }))
    }

    /// Finds `name`, and if `version` is given, with that version (an unversioned
    /// image or symbol matches any version, as the dynamic linker allows).
    pub(crate) fn lookup(
        &self,
        name: &str,
        version: Option<&str>,
        base: usize,
    ) -> Result<Option<Symbol<'a>>, ElfError> {
        let mut found = None;
        let mut error = None;
        self.candidates(name.as_bytes(), |idx| {
            match self.symbol(idx, base, (Some(name), version)) {
                Ok(Some(sym))
                    if sym.name == name
                        && version.is_none_or(|v| sym.version.is_none_or(|sv| sv == v)) =>
                {
                    found = Some(sym);
                    true
                }
                Ok(_) => false,
                Err(e) => {
                    error = Some(e);
                    true
                }
            }
        })?;
        match error {
            Some(e) => Err(e),
            None => Ok(found),
        }
    }

    /// Iterates the usable symbols in table order.
    pub(crate) fn symbols(&self, base: usize) -> Symbols<'a> {
        Symbols {
            image: *self,
            base,
            next: 0,
        }
    }
}

/// `bytes` as a `str`, if they are UTF-8. Bytes equal to `expected` are, and need no
/// check: a lookup then never runs the UTF-8 validator, whose code a process's first call
/// would otherwise fetch from another page.
fn text<'b>(bytes: &'b [u8], expected: Option<&str>) -> Option<&'b str> {
    if expected.is_some_and(|e| e.as_bytes() == bytes) {
        // SAFETY: the bytes equal those of a `str`, so they are valid UTF-8.
        return Some(unsafe { core::str::from_utf8_unchecked(bytes) });
    }
    core::str::from_utf8(bytes).ok()
}

/// Iterator over an image's usable symbols (see [`crate::Vdso::symbols`]). Entries that
/// cannot be read are skipped.
#[derive(Clone, Debug)]
pub struct Symbols<'a> {
    image: Image<'a>,
    base: usize,
    next: usize,
}

impl<'a> Iterator for Symbols<'a> {
    type Item = Symbol<'a>;

    fn next(&mut self) -> Option<Symbol<'a>> {
        while self.next < self.image.nsyms {
            let idx = self.next;
            self.next = idx.saturating_add(1); // below `nsyms`, so it never saturates
                                               // An unreadable entry is skipped like an unusable one, so that every symbol
                                               // `lookup` can return is also listed here.
            if let Ok(Some(sym)) = self.image.symbol(idx, self.base, (None, None)) {
                return Some(sym);
            }
        }
        None
    }
}
