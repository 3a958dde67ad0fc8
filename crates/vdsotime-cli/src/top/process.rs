//! What `top` learns of a process the first time it sees it, from /proc and from its
//! executable: name, executable, vDSO mapping, tracer, ABI, interpreter and C library.
//! Read once and kept, so a process that exits later is still described. The files are
//! the inodes the process runs and maps, opened through /proc's magic links (see
//! [`crate::top::object`]); a fact that cannot be read is kept as unknown, with why.

use crate::top::binary::{self, Exe};
use crate::top::object::{self, Unknown};
use crate::top::syscalls::Abi;

/// The C library a process maps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Libc {
    /// glibc, with the newest `GLIBC_2.N` its symbols define, where it could be read.
    Glibc(Option<(u32, u32)>),
    /// musl.
    Musl,
}

impl Libc {
    /// `glibc 2.41`, `glibc`, `musl`.
    pub fn label(&self) -> String {
        match self {
            Libc::Glibc(Some((a, b))) => format!("glibc {a}.{b}"),
            Libc::Glibc(None) => "glibc".into(),
            Libc::Musl => "musl".into(),
        }
    }
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
    /// A `[vdso]` line in /proc/PID/maps; `None` where the maps could not be read.
    pub has_vdso: Option<bool>,
    /// The tracer's pid and name (`TracerPid` in /proc/PID/status).
    pub tracer: Option<(u32, String)>,
    /// What the executable says, where it could be read.
    pub program: Option<Exe>,
    /// The C library mapped, if one is recognised.
    pub libc: Option<Libc>,
    /// The facts that could not be read, each with why: `executable: not permitted ...`.
    pub unknown: Vec<String>,
}

impl Facts {
    /// A 32-bit executable on a 64-bit kernel.
    pub fn compat(&self) -> bool {
        self.program
            .as_ref()
            .is_some_and(|e| e.class == vdsotime::ElfClass::Elf32)
            && cfg!(target_pointer_width = "64")
    }

    /// The ABI its system call numbers are in.
    pub fn abi(&self) -> Abi {
        if self.compat() {
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

/// `PROC_PID_INIT_INO`: the inode number of the initial PID namespace's
/// /proc/PID/ns/pid (include/linux/proc_ns.h).
const INITIAL_PID_NAMESPACE: u64 = 0xEFFF_FFFC;

/// Whether this process sees the initial PID namespace's numbers (not a container's).
pub fn in_initial_pid_namespace() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self/ns/pid").is_ok_and(|m| m.ino() == INITIAL_PID_NAMESPACE)
}

/// The name of the row of every process outside this PID namespace: the kernel
/// reports their calls with pid 0, as they have no number here.
pub const OUTSIDE: &str = "(outside this PID namespace)";

/// Reads everything about `pid` that /proc still shows; `seen` is false if nothing.
pub fn read(pid: u32) -> Facts {
    if pid == 0 {
        // No process of this namespace has it (the idle tasks make no system calls).
        return Facts {
            comm: OUTSIDE.into(),
            ..Facts::default()
        };
    }
    let proc = format!("/proc/{pid}");
    let Some(comm) = comm(pid) else {
        return Facts::default();
    };
    let exe = std::fs::read_link(format!("{proc}/exe"))
        .ok()
        .map(|p| p.display().to_string());
    let mut unknown = Vec::new();
    let maps = match std::fs::read_to_string(format!("{proc}/maps")) {
        Ok(maps) => maps,
        // Another user's process without ptrace read access (CAP_PERFMON alone).
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            unknown.push(format!(
                "memory map: not permitted: needs {}",
                object::EXE_NEEDS
            ));
            String::new()
        }
        Err(_) => String::new(),
    };
    if maps.is_empty() && unknown.is_empty() {
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
    let program = object::open(&format!("{proc}/exe"), object::EXE_NEEDS)
        .and_then(|f| binary::executable(&f))
        .map_err(|e| unknown.push(format!("executable: {e}")))
        .ok();
    let libc = maps.lines().find_map(|l| libc_of(l, &proc, &mut unknown));
    Facts {
        comm,
        exe,
        seen: true,
        has_vdso: (!maps.is_empty()).then(|| maps.lines().any(|l| l.ends_with("[vdso]"))),
        tracer,
        program,
        libc,
        unknown,
    }
}

/// The C library the mapping on /proc/PID/maps line `line` is, if it is one: glibc's
/// `libc.so.6`, musl's `ld-musl-*`. Only its name is taken from the line; glibc's
/// version is read from the mapped file itself, through /proc/PID/map_files.
fn libc_of(line: &str, proc: &str, unknown: &mut Vec<String>) -> Option<Libc> {
    // `start-end perms offset dev inode   path`, the path possibly with spaces.
    let mut fields = line.splitn(6, ' ');
    let range = fields.next()?;
    let path = fields.nth(4)?.trim_start();
    let path = path.strip_suffix(" (deleted)").unwrap_or(path);
    let name = path.rsplit('/').next()?;
    if name.starts_with("ld-musl-") || name.starts_with("libc.musl-") {
        return Some(Libc::Musl);
    }
    if !(name == "libc.so.6" || (name.starts_with("libc-2.") && name.ends_with(".so"))) {
        return None;
    }
    let (start, end) = range.split_once('-')?;
    let hex = |h| u64::from_str_radix(h, 16).ok();
    let entry = format!("{proc}/map_files/{:x}-{:x}", hex(start)?, hex(end)?);
    let version = object::open(&entry, object::MAP_FILES_NEEDS)
        .and_then(|f| binary::glibc_version(&f))
        .unwrap_or_else(|e: Unknown| {
            unknown.push(format!("C library version: {e}"));
            None
        });
    Some(Libc::Glibc(version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_seen_whole() {
        let f = read(std::process::id());
        assert!(f.seen && !f.comm.is_empty());
        assert!(f.program.is_some(), "its own executable is ELF: {f:?}");
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            assert!(f.unknown.is_empty(), "root reads everything: {f:?}");
        }
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
