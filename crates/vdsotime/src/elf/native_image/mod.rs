//! The process's own vDSO, read for a function's first call: [`Image`] in this
//! process's layout ([`Native`]), fixed at compile time.
//!
//! A fresh process's first call fetches each line of the code it runs from memory, so
//! it runs only what one lookup needs: the header and program headers, the dynamic
//! table, one hash walk, one symbol and one version check, each read bounds-checked with
//! no branch on class or byte order. It finds what the same image gives through
//! [`crate::Vdso::lookup`]: the code is the same.

use super::reader::Native;
use super::Image;

/// The process's own image, at `base` in this process.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NativeImage<'a> {
    image: Image<'a, Native>,
    base: usize,
}

impl<'a> NativeImage<'a> {
    /// The image located by [`Image::open`], lying at `base` in this process.
    pub(crate) fn new(image: Image<'a, Native>, base: usize) -> NativeImage<'a> {
        NativeImage { image, base }
    }

    /// The address of `name` defined with `version` (or unversioned), and whether the
    /// image gave it that version: what [`crate::Vdso::lookup`] finds.
    #[inline(never)] // prefetched by its address
    pub(crate) fn lookup(&self, name: &str, version: &str) -> Option<(usize, bool)> {
        let sym = self.image.lookup(name, Some(version), self.base).ok()??;
        Some((sym.address, sym.version.is_some()))
    }
}

/// The lookup a first call makes, on any bytes (at their own address), for the fuzz
/// targets (`cargo fuzz` builds with `--cfg fuzzing`): the image's header, program headers
/// and tables read as [`crate::Vdso::parse`] reads them, in this process's layout.
/// `Err(())` when the image is refused, `Ok(None)` when the symbol is not found.
#[cfg(fuzzing)]
#[allow(clippy::result_unit_err)]
pub fn fuzz_lookup(bytes: &[u8], name: &str, version: &str) -> Result<Option<(usize, bool)>, ()> {
    let header = super::Header::<Native>::parse(bytes).map_err(drop)?;
    let load = header.first_load(&header.reader(bytes)).map_err(drop)?;
    let image = Image::open(header, load, bytes).map_err(drop)?;
    Ok(NativeImage::new(image, bytes.as_ptr() as usize).lookup(name, version))
}

#[cfg(test)]
mod tests;
