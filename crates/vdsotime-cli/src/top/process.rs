//! What `top` learns of a process the first time it sees it, from /proc and from its
//! executable: name, executable, vDSO mapping, tracer, ABI, interpreter and C library.
//! Read once and kept, so a process that exits later is still described.

use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::top::syscalls::Abi;

/// The C library a process maps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Libc {
    /// glibc, with its version (`2.41`) where its file states it.
    Glibc(Option<(u32, u32)>),
    /// musl.
    Musl,
}

/// One process, as first seen.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    /// `comm`.
    pub comm: String,
    /// The executable's path, where it could be read.
    pub exe: Option<String>,
    /// Whether /proc could be read at all (the process had not exited yet).
    pub seen: bool,
    /// A `[vdso]` line in /proc/PID/maps.
    pub has_vdso: bool,
    /// The tracer's pid and name (`TracerPid` in /proc/PID/status).
    pub tracer: Option<(u32, String)>,
    /// A 32-bit executable on a 64-bit kernel.
    pub compat: bool,
    /// The executable's `PT_INTERP`; `None` for a static binary.
    pub interp: Option<String>,
    /// The executable could be read as ELF.
    pub elf: bool,
    /// The C library mapped, if one is recognised.
    pub libc: Option<Libc>,
}

impl Facts {
    /// The ABI its system call numbers are in.
    pub fn abi(&self) -> Abi {
        if self.compat {
            Abi::I386
        } else {
            Abi::Native
        }
    }
}

/// `comm` of `pid`, if it still exists.
pub fn comm(pid: u32) -> Option<String> {
    let c = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    Some(c.trim_end_matches('\n').to_string())
}

/// Whether `pid` is still running: it exists and is not a zombie waiting for its parent
/// (whose /proc entry stays until then).
pub fn alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // `pid (comm) S ...`: the state follows the last `)`, as comm may hold one.
    let state = stat
        .rsplit_once(") ")
        .and_then(|(_, rest)| rest.chars().next());
    !matches!(state, Some('Z' | 'X') | None)
}

/// Reads everything about `pid` that /proc still shows; `seen` is false if nothing.
pub fn read(pid: u32) -> Facts {
    let proc = format!("/proc/{pid}");
    let Some(comm) = comm(pid) else {
        return Facts::default();
    };
    let exe = std::fs::read_link(format!("{proc}/exe"))
        .ok()
        .map(|p| p.display().to_string());
    let maps = std::fs::read_to_string(format!("{proc}/maps")).unwrap_or_default();
    if maps.is_empty() {
        // Exiting (its memory already gone) or a kernel thread: nothing to judge by.
        return Facts {
            comm,
            ..Facts::default()
        };
    }
    let status = std::fs::read_to_string(format!("{proc}/status")).unwrap_or_default();
    let tracer = status
        .lines()
        .find_map(|l| l.strip_prefix("TracerPid:"))
        .and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|&t| t != 0)
        .map(|t| (t, self::comm(t).unwrap_or_default()));
    let elf = std::fs::File::open(format!("{proc}/exe"))
        .ok()
        .and_then(|f| elf_facts(&f));
    let libc = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find_map(|path| libc_of(path, &proc));
    Facts {
        comm,
        exe,
        seen: true,
        has_vdso: maps.lines().any(|l| l.ends_with("[vdso]")),
        tracer,
        compat: elf.as_ref().is_some_and(|e| e.0) && cfg!(target_pointer_width = "64"),
        interp: elf.as_ref().and_then(|e| e.1.clone()),
        elf: elf.is_some(),
        libc,
    }
}

/// The C library a mapped file is, if it is one: glibc's `libc.so.6`, musl's `ld-musl-*`.
fn libc_of(path: &str, proc: &str) -> Option<Libc> {
    let name = Path::new(path).file_name()?.to_str()?;
    if name.starts_with("ld-musl-") || name.starts_with("libc.musl-") {
        return Some(Libc::Musl);
    }
    if name == "libc.so.6" || (name.starts_with("libc-2.") && name.ends_with(".so")) {
        // The process's own view of the file (its mount namespace), through /proc.
        let text = std::fs::read(format!("{proc}/root{path}")).unwrap_or_default();
        return Some(Libc::Glibc(glibc_version(&text)));
    }
    None
}

/// glibc's version from its banner, `... release version 2.41.`.
pub fn glibc_version(image: &[u8]) -> Option<(u32, u32)> {
    const MARK: &[u8] = b"release version ";
    let at = image.windows(MARK.len()).position(|w| w == MARK)? + MARK.len();
    let tail = image.get(at..image.len().min(at + 12))?;
    let text: String = tail
        .iter()
        .take_while(|b| b.is_ascii_digit() || **b == b'.')
        .map(|&b| char::from(b))
        .collect();
    let mut parts = text.split('.').filter_map(|p| p.parse().ok());
    Some((parts.next()?, parts.next()?))
}

/// An executable's class (true: 32-bit) and `PT_INTERP`, read from its ELF header and
/// program headers; `None` if it is not ELF.
pub fn elf_facts(file: &std::fs::File) -> Option<(bool, Option<String>)> {
    let mut h = [0u8; 64];
    file.read_exact_at(&mut h, 0).ok()?;
    if h[..4] != *b"\x7fELF" || h[5] != 1 {
        return None; // not ELF, or big-endian (not a Linux host's own here)
    }
    let is32 = h[4] == 1;
    let u16_at = |b: &[u8], i: usize| u64::from(u16::from_le_bytes([b[i], b[i + 1]]));
    let u32_at = |b: &[u8], i: usize| {
        u64::from(u32::from_le_bytes(b[i..i + 4].try_into().unwrap_or([0; 4])))
    };
    let u64_at = |b: &[u8], i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
    let (phoff, phentsize, phnum) = if is32 {
        (u32_at(&h, 28), u16_at(&h, 42), u16_at(&h, 44))
    } else {
        (u64_at(&h, 32), u16_at(&h, 54), u16_at(&h, 56))
    };
    let entsize = usize::try_from(phentsize).ok()?;
    if entsize < if is32 { 32 } else { 56 } || phnum > 256 {
        return None;
    }
    let mut ph = vec![0u8; entsize * usize::try_from(phnum).ok()?];
    file.read_exact_at(&mut ph, phoff).ok()?;
    let interp = ph.chunks(entsize).find_map(|p| {
        const PT_INTERP: u64 = 3;
        if u32_at(p, 0) != PT_INTERP {
            return None;
        }
        let (off, size) = if is32 {
            (u32_at(p, 4), u32_at(p, 16))
        } else {
            (u64_at(p, 8), u64_at(p, 32))
        };
        let mut name = vec![0u8; usize::try_from(size.min(4096)).ok()?];
        file.read_exact_at(&mut name, off).ok()?;
        let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        Some(String::from_utf8_lossy(&name[..end]).into_owned())
    });
    Some((is32, interp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_glibc_s_banner() {
        let banner = b"xxGNU C Library (Debian GLIBC 2.41-12) stable release version 2.41.\n";
        assert_eq!(glibc_version(banner), Some((2, 41)));
        assert_eq!(glibc_version(b"no banner"), None);
    }

    #[test]
    fn this_process_is_seen_whole() {
        let f = read(std::process::id());
        assert!(f.seen && !f.comm.is_empty());
        assert!(f.elf, "its own executable is ELF: {f:?}");
        assert!(f.exe.is_some());
    }

    #[test]
    fn a_process_that_is_gone_is_not_seen() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        // A zombie until waited for: exited all the same.
        while std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| !s.contains(") Z "))
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(!alive(pid), "a zombie has exited");
        child.wait().unwrap();
        assert!(!read(pid).seen);
        assert!(!alive(pid));
        assert!(alive(std::process::id()));
    }
}
