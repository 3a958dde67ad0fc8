//! Symbol versions: `DT_VERSYM` gives each symbol a version index, `DT_VERDEF` names
//! the index. Images without them (some synthetic vDSOs) have unversioned symbols, and
//! a lookup that asks for a version accepts those, as the dynamic linker does.

use super::reader::{offset, plus, Form};
use super::{ElfError, Image};

/// `VER_FLG_BASE`: the verdef naming the file itself, not a version.
const VER_FLG_BASE: u16 = 1;
/// Bound on the verdef chain; a vDSO has two or three.
const MAX_VERDEFS: usize = 256;

impl<'a, F: Form> Image<'a, F> {
    /// Where the version name of symbol `idx` is in the string table, `None` if the
    /// image or the symbol has none (or its index is one no definition names).
    #[inline(always)]
    pub(super) fn version_of(&self, idx: usize) -> Result<Option<usize>, F::Error> {
        let (Some(versym), Some(mut def)) = (self.versym, self.verdef) else {
            return Ok(None);
        };
        let r = &self.r;
        // The top bit marks a hidden symbol; the rest is the version index.
        let ndx = r.u16(offset(versym, idx, 2)?, "DT_VERSYM")? & 0x7fff;
        if ndx <= 1 {
            return Ok(None); // 0: local, 1: global, unversioned
        }
        for _ in 0..MAX_VERDEFS {
            // Elf{32,64}_Verdef: vd_flags at 2, vd_ndx at 4, vd_aux at 12, vd_next at 16,
            // the last two relative to the entry itself. Its first 16 bytes are read either
            // way (vd_aux if it matches, vd_next past them if not): one bound for them.
            let head = r.sub(def, 16, "DT_VERDEF")?;
            let flags = head.u16(2, "DT_VERDEF")?;
            let vd_ndx = head.u16(4, "DT_VERDEF")?;
            if flags & VER_FLG_BASE == 0 && vd_ndx & 0x7fff == ndx {
                let aux = plus(def, head.u32(12, "DT_VERDEF")? as usize)?;
                return Ok(Some(r.u32(aux, "verdaux")? as usize));
            }
            let next = r.u32(plus(def, 16)?, "DT_VERDEF")? as usize;
            if next == 0 {
                break;
            }
            def = plus(def, next)?;
        }
        Ok(None)
    }

    /// The string at `at` in the dynamic string table, which must end (its NUL) inside
    /// the `DT_STRSZ` bytes of the table.
    pub(super) fn string(&self, at: usize) -> Result<&'a [u8], F::Error> {
        if at >= self.strsz {
            return Err(ElfError::OutOfBounds("DT_STRTAB").into());
        }
        let table = self.r.slice(self.strtab, self.strsz, "DT_STRTAB")?;
        let tail = table.get(at..).ok_or(ElfError::OutOfBounds("DT_STRTAB"))?;
        let len = tail
            .iter()
            .position(|&b| b == 0)
            .ok_or(ElfError::OutOfBounds("DT_STRTAB string"))?;
        Ok(&tail[..len])
    }
}

impl<'a> Image<'a, super::Any> {
    /// The version names the image defines (`DT_VERDEF`), the file's own name left out.
    pub(crate) fn versions(&self) -> Versions<'a> {
        Versions {
            image: *self,
            next: self.verdef,
            left: MAX_VERDEFS,
        }
    }
}

/// Iterator over the version names an image defines (see [`crate::Vdso::versions`]):
/// `LINUX_2.6` in a vDSO, `GLIBC_2.2.5` to `GLIBC_2.41` in glibc. It ends at the first
/// definition that cannot be read.
#[derive(Clone, Debug)]
pub struct Versions<'a> {
    image: Image<'a, super::Any>,
    next: Option<usize>,
    left: usize,
}

impl<'a> Versions<'a> {
    /// The definition at `def`: its name unless it is the file's own, and the next one.
    fn read(&self, def: usize) -> Result<(Option<&'a str>, Option<usize>), ElfError> {
        let r = &self.image.r;
        // Elf{32,64}_Verdef as in `version_of`: vd_flags at 2, vd_aux at 12, vd_next at 16.
        let head = r.sub(def, 20, "DT_VERDEF")?;
        let next = head.u32(16, "DT_VERDEF")? as usize;
        let next = if next == 0 {
            None
        } else {
            Some(plus(def, next)?)
        };
        if head.u16(2, "DT_VERDEF")? & VER_FLG_BASE != 0 {
            return Ok((None, next));
        }
        let aux = plus(def, head.u32(12, "DT_VERDEF")? as usize)?;
        let name = self.image.string(r.u32(aux, "verdaux")? as usize)?;
        let name = core::str::from_utf8(name).map_err(|_| ElfError::OutOfBounds("version name"))?;
        Ok((Some(name), next))
    }
}

impl<'a> Iterator for Versions<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        while let Some(def) = self.next.take() {
            self.left = self.left.checked_sub(1)?;
            let (name, next) = self.read(def).ok()?;
            self.next = next;
            if name.is_some() {
                return name;
            }
        }
        None
    }
}
