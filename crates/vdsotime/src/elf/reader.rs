//! Bounds-checked, byte-order-aware reads from an image held as a byte slice.
//!
//! Every read names the offset it wants and gets an error past the end: no offset in
//! the image is trusted, and no arithmetic on one can wrap.
//!
//! The class and byte order come from a [`Form`]: [`Any`] carries them as the image's
//! header says, so that one architecture's tests can read every other's images; [`Native`]
//! fixes them at compile time to this process's, so that the reads of a process's own
//! image compile to plain loads, with no branch on either.

use super::machine::NATIVE_MACHINE;
use super::{ElfClass, ElfError, Endian};

/// The class and byte order an image is read in, and what a refusal says.
pub(crate) trait Form: Copy + core::fmt::Debug {
    /// Why an image was refused: [`ElfError`] where the caller is told, or [`Refused`]
    /// where only the refusal matters (the first call, which then takes the system call),
    /// so that no error's detail is built in code the first call fetches.
    type Error: From<ElfError> + Copy + core::fmt::Debug + PartialEq;
    /// The form of an image whose `e_ident` says `class` and `endian`, with `e_machine`
    /// `machine`; `None` when this form cannot read it.
    fn of(class: ElfClass, endian: Endian, machine: u16) -> Option<Self>;
    fn class(self) -> ElfClass;
    fn endian(self) -> Endian;
    /// The `e_machine` this form reads, where it is fixed at compile time (it then equals
    /// the header's: [`Form::of`] refuses any other); `None` where it is the header's.
    fn machine(self) -> Option<u16>;
}

/// Whatever class and byte order the image has: read at run time.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Any {
    class: ElfClass,
    endian: Endian,
}

impl Form for Any {
    type Error = ElfError;

    fn of(class: ElfClass, endian: Endian, _machine: u16) -> Option<Any> {
        Some(Any { class, endian })
    }

    fn class(self) -> ElfClass {
        self.class
    }

    fn endian(self) -> Endian {
        self.endian
    }

    fn machine(self) -> Option<u16> {
        None
    }
}

/// This process's machine, class and byte order, known at compile time: an image of
/// another layout is refused by its header.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Native;

impl Native {
    pub(crate) const CLASS: ElfClass = if core::mem::size_of::<usize>() == 8 {
        ElfClass::Elf64
    } else {
        ElfClass::Elf32
    };
    pub(crate) const ENDIAN: Endian = if cfg!(target_endian = "little") {
        Endian::Little
    } else {
        Endian::Big
    };
}

impl Form for Native {
    type Error = Refused;

    #[inline(always)]
    fn of(class: ElfClass, endian: Endian, machine: u16) -> Option<Native> {
        (class == Native::CLASS && endian == Native::ENDIAN && machine == NATIVE_MACHINE)
            .then_some(Native)
    }

    #[inline(always)]
    fn class(self) -> ElfClass {
        Native::CLASS
    }

    #[inline(always)]
    fn endian(self) -> Endian {
        Native::ENDIAN
    }

    #[inline(always)]
    fn machine(self) -> Option<u16> {
        Some(NATIVE_MACHINE)
    }
}

/// A refusal without its reason (see [`Form::Error`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Refused;

impl From<ElfError> for Refused {
    #[inline(always)]
    fn from(_: ElfError) -> Refused {
        Refused
    }
}

/// A view of the image that knows its class and byte order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reader<'a, F> {
    pub(crate) bytes: &'a [u8],
    pub(crate) form: F,
}

impl<'a, F: Form> Reader<'a, F> {
    /// `len` bytes at `off`, or an error naming `what` was out of bounds.
    #[inline(always)]
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

    /// The `len` bytes at `off`, as a reader of its own: one bound for the fields read
    /// from it at fixed offsets.
    #[inline(always)]
    pub(crate) fn sub(&self, off: usize, len: usize, what: &'static str) -> Result<Self, ElfError> {
        Ok(Reader {
            bytes: self.slice(off, len, what)?,
            form: self.form,
        })
    }

    #[inline(always)]
    fn array<const N: usize>(&self, off: usize, what: &'static str) -> Result<[u8; N], ElfError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.slice(off, N, what)?);
        Ok(out)
    }

    #[inline(always)]
    pub(crate) fn u8(&self, off: usize, what: &'static str) -> Result<u8, ElfError> {
        Ok(self.array::<1>(off, what)?[0])
    }

    #[inline(always)]
    pub(crate) fn u16(&self, off: usize, what: &'static str) -> Result<u16, ElfError> {
        let b = self.array(off, what)?;
        Ok(match self.form.endian() {
            Endian::Little => u16::from_le_bytes(b),
            Endian::Big => u16::from_be_bytes(b),
        })
    }

    #[inline(always)]
    pub(crate) fn u32(&self, off: usize, what: &'static str) -> Result<u32, ElfError> {
        let b = self.array(off, what)?;
        Ok(match self.form.endian() {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        })
    }

    #[inline(always)]
    pub(crate) fn u64(&self, off: usize, what: &'static str) -> Result<u64, ElfError> {
        let b = self.array(off, what)?;
        Ok(match self.form.endian() {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        })
    }

    /// A class-sized word (`Elf32_Addr`/`Elf64_Addr`, `Off`, `Xword` ...), widened to `u64`.
    #[inline(always)]
    pub(crate) fn word(&self, off: usize, what: &'static str) -> Result<u64, ElfError> {
        match self.form.class() {
            ElfClass::Elf32 => self.u32(off, what).map(u64::from),
            ElfClass::Elf64 => self.u64(off, what),
        }
    }

    /// Picks the 32-bit or 64-bit layout's number (sizes and field offsets).
    #[inline(always)]
    pub(crate) fn pick(&self, elf32: usize, elf64: usize) -> usize {
        match self.form.class() {
            ElfClass::Elf32 => elf32,
            ElfClass::Elf64 => elf64,
        }
    }
}

/// `a + b`, checked: the field `b` bytes into a structure at `a`.
#[inline(always)]
pub(crate) fn plus(a: usize, b: usize) -> Result<usize, ElfError> {
    a.checked_add(b)
        .ok_or(ElfError::OutOfBounds("offset arithmetic"))
}

/// `a + b * c` with every step checked: the shape of every table-entry offset.
#[inline(always)]
pub(crate) fn offset(a: usize, b: usize, c: usize) -> Result<usize, ElfError> {
    b.checked_mul(c)
        .and_then(|bc| a.checked_add(bc))
        .ok_or(ElfError::OutOfBounds("offset arithmetic"))
}

/// Narrows a file-supplied 64-bit value to `usize`.
#[inline(always)]
pub(crate) fn to_usize(v: u64, what: &'static str) -> Result<usize, ElfError> {
    usize::try_from(v).map_err(|_| ElfError::OutOfBounds(what))
}
