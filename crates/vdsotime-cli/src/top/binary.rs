//! What a process's executable and its C library say of it, read with the core's ELF
//! reader from files opened as [`crate::top::object`] opens them, and only the bytes
//! needed: the header and program headers, the interpreter's name, the C library's
//! version definitions, and for a static program its search for the vDSO's symbol names.

use std::fs::File;

use vdsotime::elf::{Program, Span};
use vdsotime::{ElfClass, Vdso};

use crate::top::object::{self, Unknown};

/// The longest interpreter path read.
const MAX_INTERP: u64 = 4096;
/// The most of a static program searched for the vDSO's symbol names.
const MAX_SEARCHED: u64 = 512 << 20;
/// The piece of it read at a time.
const PIECE: usize = 1 << 20;

/// What an executable says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exe {
    /// Its word size.
    pub class: ElfClass,
    /// Its `PT_INTERP`; `None` for a static program.
    pub interp: Option<String>,
    /// For a static program: whether it holds the name of its architecture's vDSO
    /// `clock_gettime`, which a C library or runtime that calls the vDSO looks up.
    pub names_the_vdso: Option<bool>,
}

fn not_elf(e: vdsotime::ElfError) -> Unknown {
    Unknown::NotElf(e.to_string())
}

/// The header and program headers of `file`.
fn program(file: &File) -> Result<Program, Unknown> {
    let head = object::read(file, 0, 64)?;
    let end = Program::headers_end(&head).map_err(not_elf)?;
    Program::parse(&object::read(file, 0, end as u64)?).map_err(not_elf)
}

/// Reads the executable `file`.
pub fn executable(file: &File) -> Result<Exe, Unknown> {
    let p = program(file)?;
    let interp = match p.interp {
        Some(Span { offset, size }) => {
            let bytes = object::read(file, offset, size.min(MAX_INTERP))?;
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            Some(String::from_utf8_lossy(&bytes[..end]).into_owned())
        }
        None => None,
    };
    let names_the_vdso = match interp {
        Some(_) => None,
        None => Some(names_the_vdso(file, &p)?),
    };
    Ok(Exe {
        class: p.class,
        interp,
        names_the_vdso,
    })
}

/// Whether `file` holds the name of its architecture's vDSO `clock_gettime` (either
/// form), searched piece by piece, at most [`MAX_SEARCHED`] bytes.
fn names_the_vdso(file: &File, p: &Program) -> Result<bool, Unknown> {
    let Some(arch) = vdsotime::arch::for_machine(p.machine, p.class) else {
        return Ok(false);
    };
    let names: Vec<&[u8]> = [arch.clock_gettime, arch.clock_gettime64]
        .into_iter()
        .flatten()
        .map(str::as_bytes)
        .collect();
    let longest = names.iter().map(|n| n.len()).max().unwrap_or(0);
    let mut at = 0u64;
    while at < MAX_SEARCHED {
        let piece = object::read(file, at, (PIECE + longest) as u64)?;
        if names
            .iter()
            .any(|n| piece.windows(n.len()).any(|w| w == *n))
        {
            return Ok(true);
        }
        if piece.len() <= longest {
            break;
        }
        at += PIECE as u64;
    }
    Ok(false)
}

/// The newest `GLIBC_2.N` version that the C library `file` defines: its release, or
/// an older one where a release added no symbol (never a newer one).
pub fn glibc_version(file: &File) -> Result<Option<(u32, u32)>, Unknown> {
    let p = program(file)?;
    let (Some(load), Some(dynamic)) = (p.first_load, p.dynamic) else {
        return Err(Unknown::NotElf("no loaded segment or dynamic table".into()));
    };
    // The image as the reader wants it: the bytes it reads, each at its file offset,
    // and zeros between them (never read).
    let end = |s: Span| s.offset.saturating_add(s.size);
    let len = end(load).max(end(dynamic));
    if len > object::MAX_READ as u64 {
        return Err(Unknown::NotElf(format!("a library of {len} bytes")));
    }
    let mut image = vec![0u8; len as usize];
    for s in [load, dynamic] {
        let bytes = object::read(file, s.offset, s.size)?;
        let at = s.offset as usize;
        image[at..at + bytes.len()].copy_from_slice(&bytes);
    }
    let lib = Vdso::parse(&image).map_err(not_elf)?;
    Ok(lib.versions().filter_map(version).max())
}

/// `GLIBC_2.41` as (2, 41); `None` for any other name.
fn version(name: &str) -> Option<(u32, u32)> {
    let mut parts = name.strip_prefix("GLIBC_")?.split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_version_names_are_read() {
        assert_eq!(version("GLIBC_2.41"), Some((2, 41)));
        assert_eq!(version("GLIBC_2.2.5"), Some((2, 2)));
        assert_eq!(version("GLIBC_PRIVATE"), None);
        assert_eq!(version("LINUX_2.6"), None);
    }

    /// This test program is dynamic; its C library (glibc here) has a version.
    #[test]
    fn this_program_and_its_c_library_are_read() {
        let exe = object::open("/proc/self/exe", object::EXE_NEEDS).unwrap();
        let e = executable(&exe).unwrap();
        assert!(e.interp.as_ref().is_some_and(|i| i.contains("ld")), "{e:?}");
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let Some(range) = maps
            .lines()
            .find(|l| l.ends_with("/libc.so.6"))
            .and_then(|l| l.split_whitespace().next())
        else {
            return crate::skip::skip(
                "top::binary::tests::this_program_and_its_c_library_are_read",
                "glibc",
                "this test program maps no libc.so.6",
            );
        };
        let (a, b) = range.split_once('-').unwrap();
        let (a, b) = (
            u64::from_str_radix(a, 16).unwrap(),
            u64::from_str_radix(b, 16).unwrap(),
        );
        let entry = format!("/proc/self/map_files/{a:x}-{b:x}");
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        match object::open(&entry, object::MAP_FILES_NEEDS) {
            Ok(lib) => {
                let v = glibc_version(&lib).unwrap().expect("a GLIBC_2.N version");
                assert!(v >= (2, 17), "{v:?}");
            }
            // Even one's own map_files needs CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE).
            Err(Unknown::Denied(needs)) if !root => assert!(needs.contains("CAP_SYS_ADMIN")),
            Err(e) => panic!("{entry}: {e}"),
        }
    }
}
