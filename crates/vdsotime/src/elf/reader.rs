//! Bounds-checked, byte-order-aware reads from an image held as a byte slice.
//!
//! Every read names the offset it wants and gets `None` past the end: no offset in
//! the image is trusted, and no arithmetic on one can wrap.

use super::{ElfClass, ElfError, Endian};

/// A view of the image that knows its class and byte order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reader<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) class: ElfClass,
    pub(crate) endian: Endian,
}

impl<'a> Reader<'a> {
    /// `len` bytes at `off`, or an error naming `what` was out of bounds.
    pub(crate) fn slice(
        &self,
        off: usize,
        len: usize,
        what: &'static str,
    ) -> Result<&'a [u8], ElfError> {
        off.checked_add(len)
            .and_then(|end| self.bytes.get(off..end))
            .ok_or(ElfError::OutOfBounds(what))
    }

    fn array<const N: usize>(&self, off: usize, what: &'static str) -> Result<[u8; N], ElfError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.slice(off, N, what)?);
        Ok(out)
    }

    pub(crate) fn u8(&self, off: usize, what: &'static str) -> Result<u8, ElfError> {
        Ok(self.array::<1>(off, what)?[0])
    }

    pub(crate) fn u16(&self, off: usize, what: &'static str) -> Result<u16, ElfError> {
        let b = self.array(off, what)?;
        Ok(match self.endian {
            Endian::Little => u16::from_le_bytes(b),
            Endian::Big => u16::from_be_bytes(b),
        })
    }

    pub(crate) fn u32(&self, off: usize, what: &'static str) -> Result<u32, ElfError> {
        let b = self.array(off, what)?;
        Ok(match self.endian {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        })
    }

    pub(crate) fn u64(&self, off: usize, what: &'static str) -> Result<u64, ElfError> {
        let b = self.array(off, what)?;
        Ok(match self.endian {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        })
    }

    /// A class-sized word (`Elf32_Addr`/`Elf64_Addr`, `Off`, `Xword` ...), widened to `u64`.
    pub(crate) fn word(&self, off: usize, what: &'static str) -> Result<u64, ElfError> {
        match self.class {
            ElfClass::Elf32 => self.u32(off, what).map(u64::from),
            ElfClass::Elf64 => self.u64(off, what),
        }
    }

    /// Picks the 32-bit or 64-bit layout's number (sizes and field offsets).
    pub(crate) const fn pick(&self, elf32: usize, elf64: usize) -> usize {
        match self.class {
            ElfClass::Elf32 => elf32,
            ElfClass::Elf64 => elf64,
        }
    }

    /// The NUL-terminated bytes at `off` (without the NUL); the terminator must be in bounds.
    pub(crate) fn cstr(&self, off: usize, what: &'static str) -> Result<&'a [u8], ElfError> {
        let tail = self.bytes.get(off..).ok_or(ElfError::OutOfBounds(what))?;
        let len = tail
            .iter()
            .position(|&b| b == 0)
            .ok_or(ElfError::OutOfBounds(what))?;
        Ok(&tail[..len])
    }
}

/// `a + b`, checked: the field `b` bytes into a structure at `a`.
pub(crate) fn plus(a: usize, b: usize) -> Result<usize, ElfError> {
    a.checked_add(b)
        .ok_or(ElfError::OutOfBounds("offset arithmetic"))
}

/// `a + b * c` with every step checked: the shape of every table-entry offset.
pub(crate) fn offset(a: usize, b: usize, c: usize) -> Result<usize, ElfError> {
    b.checked_mul(c)
        .and_then(|bc| a.checked_add(bc))
        .ok_or(ElfError::OutOfBounds("offset arithmetic"))
}

/// Narrows a file-supplied 64-bit value to `usize`.
pub(crate) fn to_usize(v: u64, what: &'static str) -> Result<usize, ElfError> {
    usize::try_from(v).map_err(|_| ElfError::OutOfBounds(what))
}
