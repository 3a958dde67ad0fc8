//! What an ELF file's header and program headers say of the program in it: class, byte
//! order, machine and type, and where its interpreter's name, its dynamic table and its
//! first loaded segment lie in the file. A caller reads the file's first bytes, asks
//! [`Program::headers_end`] how many the program headers need, and then reads only the
//! ranges it wants: no more of a file than these is ever needed.

use super::reader::{offset, Any};
use super::{ElfClass, ElfError, Endian, Header, PT_DYNAMIC, PT_LOAD};

/// `PT_INTERP`: the path of the program's interpreter (the dynamic loader).
const PT_INTERP: u32 = 3;

/// A range of bytes in the file, as a program header gives it (not yet checked against
/// the file's length).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// Its first byte's offset in the file.
    pub offset: u64,
    /// Its length in bytes.
    pub size: u64,
}

/// An ELF file's header and program headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Program {
    /// Word size.
    pub class: ElfClass,
    /// Byte order.
    pub endian: Endian,
    /// `e_machine`.
    pub machine: u16,
    /// `e_type`: 2 an executable at a fixed address, 3 a shared object or a
    /// position-independent executable.
    pub kind: u16,
    /// `PT_INTERP`'s bytes: the interpreter's path, NUL-terminated. `None` in a static
    /// program (and in most shared libraries).
    pub interp: Option<Span>,
    /// `PT_DYNAMIC`'s file bytes: the dynamic table. `None` in a static program.
    pub dynamic: Option<Span>,
    /// The first `PT_LOAD`'s file bytes.
    pub first_load: Option<Span>,
}

impl Program {
    /// How many bytes from the file's start the ELF header and the program headers take,
    /// read from `head`, the file's first bytes (at least its ELF header: 52 or 64).
    ///
    /// # Errors
    ///
    /// What [`Program::parse`] says of a bad header.
    pub fn headers_end(head: &[u8]) -> Result<usize, ElfError> {
        let (header, _) = Header::<Any>::read(head)?;
        let size = if header.class() == ElfClass::Elf32 {
            32
        } else {
            56
        };
        let end = offset(header.phoff, header.phnum, size)?;
        Ok(end.max(if size == 32 { 52 } else { 64 }))
    }

    /// Reads the header and the program headers from `bytes`, the file's first bytes
    /// (at least [`Program::headers_end`] of them).
    ///
    /// # Errors
    ///
    /// An [`ElfError`]: [`ElfError::BadMagic`] for a file that is not ELF,
    /// [`ElfError::OutOfBounds`] when `bytes` end before the program headers do.
    ///
    /// # Example
    ///
    /// ```
    /// use vdsotime::elf::Program;
    /// assert_eq!(Program::parse(b"#!/bin/sh\n").unwrap_err(), vdsotime::ElfError::TooShort);
    /// ```
    pub fn parse(bytes: &[u8]) -> Result<Program, ElfError> {
        let (header, kind) = Header::<Any>::read(bytes)?;
        let r = header.reader(bytes);
        let mut program = Program {
            class: header.class(),
            endian: header.endian(),
            machine: header.machine,
            kind,
            interp: None,
            dynamic: None,
            first_load: None,
        };
        header.each_phdr(&r, |p_type, ph| {
            let at = |elf32, elf64, what| ph.word(ph.pick(elf32, elf64), what);
            let span = Span {
                offset: at(4, 8, "p_offset")?,
                size: at(16, 32, "p_filesz")?,
            };
            let slot = match p_type {
                PT_INTERP => &mut program.interp,
                PT_DYNAMIC => &mut program.dynamic,
                PT_LOAD if program.first_load.is_none() => &mut program.first_load,
                _ => return Ok(()),
            };
            *slot = Some(span);
            Ok(())
        })?;
        Ok(program)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::{vec, vec::Vec};

    /// A 64-bit little-endian executable's header with `phdrs` program headers
    /// (type, offset, file size) right after it.
    fn elf64(kind: u16, phdrs: &[(u32, u64, u64)]) -> Vec<u8> {
        let mut b = vec![0u8; 64];
        b[..4].copy_from_slice(b"\x7fELF");
        (b[4], b[5], b[6]) = (2, 1, 1);
        b[16..18].copy_from_slice(&kind.to_le_bytes());
        b[18..20].copy_from_slice(&62u16.to_le_bytes());
        b[20..24].copy_from_slice(&1u32.to_le_bytes());
        b[32..40].copy_from_slice(&64u64.to_le_bytes());
        b[54..56].copy_from_slice(&56u16.to_le_bytes());
        b[56..58].copy_from_slice(&(phdrs.len() as u16).to_le_bytes());
        for &(p_type, off, size) in phdrs {
            let mut ph = [0u8; 56];
            ph[..4].copy_from_slice(&p_type.to_le_bytes());
            ph[8..16].copy_from_slice(&off.to_le_bytes());
            ph[32..40].copy_from_slice(&size.to_le_bytes());
            b.extend_from_slice(&ph);
        }
        b
    }

    #[test]
    fn an_executable_s_interpreter_and_segments_are_found() {
        let b = elf64(2, &[(6, 64, 168), (PT_INTERP, 232, 28), (PT_LOAD, 0, 4096)]);
        assert_eq!(Program::headers_end(&b[..64]), Ok(64 + 3 * 56));
        let p = Program::parse(&b).unwrap();
        assert_eq!(
            (p.class, p.endian, p.machine, p.kind),
            (ElfClass::Elf64, Endian::Little, 62, 2)
        );
        assert_eq!(
            p.interp,
            Some(Span {
                offset: 232,
                size: 28
            })
        );
        assert_eq!(
            p.first_load,
            Some(Span {
                offset: 0,
                size: 4096
            })
        );
        assert_eq!(p.dynamic, None);
    }

    #[test]
    fn program_headers_past_the_bytes_are_refused() {
        let b = elf64(3, &[(PT_LOAD, 0, 1), (PT_DYNAMIC, 9, 16)]);
        assert_eq!(
            Program::parse(&b[..100]),
            Err(ElfError::OutOfBounds("program headers"))
        );
        assert_eq!(
            Program::parse(&b).unwrap().dynamic,
            Some(Span {
                offset: 9,
                size: 16
            })
        );
    }
}
