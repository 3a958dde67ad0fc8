//! Opening a file another process runs or maps, as root, so that the process cannot aim
//! the opening at anything else. No path name it controls is resolved: only the kernel's
//! magic links to the inode itself, `/proc/PID/exe` and `/proc/PID/map_files/START-END`
//! (`O_NOFOLLOW` does not apply to them). Each is opened without blocking and without
//! becoming a controlling terminal, then kept only if it is a regular file on a file
//! system other than FUSE (whose owner can make any read wait for ever), and read only
//! in bounded pieces.

use std::fmt;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::FileExt;

/// `FUSE_SUPER_MAGIC` in `statfs.f_type`.
const FUSE_SUPER_MAGIC: i64 = 0x6573_5546;
/// The most one read here takes: more is never needed to describe a program.
pub const MAX_READ: usize = 32 << 20;

/// Why a file could not be read, as the output says it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unknown {
    /// Refused: what would be needed to read it.
    Denied(&'static str),
    /// Not a regular file (a FIFO, a device): never read.
    NotRegular,
    /// On a FUSE file system: never read.
    Fuse,
    /// Not an ELF file the reader understands, with why.
    NotElf(String),
    /// Gone, or any other failure, with the system's words.
    Failed(String),
}

impl fmt::Display for Unknown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unknown::Denied(needs) => write!(f, "not permitted: needs {needs}"),
            Unknown::NotRegular => f.write_str("not a regular file: not read"),
            Unknown::Fuse => f.write_str("on a FUSE file system: not read"),
            Unknown::NotElf(why) => write!(f, "not readable as ELF: {why}"),
            Unknown::Failed(why) => f.write_str(why),
        }
    }
}

/// What reading another user's executable needs.
pub const EXE_NEEDS: &str = "CAP_SYS_PTRACE (ptrace read access to the process)";
/// What reading another user's mapped file through /proc/PID/map_files needs.
pub const MAP_FILES_NEEDS: &str =
    "CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE, and CAP_SYS_PTRACE (ptrace read access)";

/// Opens the magic link `path` (see the module's text); `needs` is what a refusal names.
pub fn open(path: &str, needs: &'static str) -> Result<File, Unknown> {
    let c = std::ffi::CString::new(path).map_err(|_| Unknown::Failed("a NUL in a path".into()))?;
    let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC;
    // SAFETY: a NUL-terminated path; no mode is read without O_CREAT.
    let fd = unsafe { libc::open(c.as_ptr(), flags) };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::EACCES | libc::EPERM) => Unknown::Denied(needs),
            _ => Unknown::Failed(format!("{path}: {e}")),
        });
    }
    // SAFETY: a new descriptor that nothing else owns.
    let file = unsafe { File::from_raw_fd(fd) };
    let meta = file
        .metadata()
        .map_err(|e| Unknown::Failed(format!("{path}: {e}")))?;
    if !meta.file_type().is_file() {
        return Err(Unknown::NotRegular);
    }
    // SAFETY: a zeroed statfs is a valid out-parameter.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: an open descriptor and a valid pointer.
    if unsafe { libc::fstatfs(file.as_raw_fd(), &mut fs) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(Unknown::Failed(format!("{path}: {e}")));
    }
    #[allow(clippy::unnecessary_cast)] // f_type's width differs between architectures
    if fs.f_type as i64 == FUSE_SUPER_MAGIC {
        return Err(Unknown::Fuse);
    }
    Ok(file)
}

/// `len` bytes of `file` from `offset`, or fewer where the file ends; at most
/// [`MAX_READ`].
pub fn read(file: &File, offset: u64, len: u64) -> Result<Vec<u8>, Unknown> {
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    if len > MAX_READ {
        return Err(Unknown::NotElf(format!(
            "a range of {len} bytes, more than the {MAX_READ} read"
        )));
    }
    let mut buf = vec![0u8; len];
    let mut got = 0;
    while got < len {
        match file.read_at(&mut buf[got..], offset.saturating_add(got as u64)) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Unknown::Failed(e.to_string())),
        }
    }
    buf.truncate(got);
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_and_a_device_are_refused_without_blocking() {
        let dir = std::env::temp_dir().join(format!("vdsotime-object-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let got = open(fifo.to_str().unwrap(), EXE_NEEDS).map(drop);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(got, Err(Unknown::NotRegular));
        assert_eq!(
            open("/dev/zero", EXE_NEEDS).map(drop),
            Err(Unknown::NotRegular)
        );
    }

    #[test]
    fn reads_are_bounded_and_stop_at_the_end() {
        let f = open("/proc/self/exe", EXE_NEEDS).unwrap();
        assert_eq!(read(&f, 0, 4).unwrap(), b"\x7fELF");
        assert!(read(&f, 1 << 40, 4).unwrap().is_empty(), "past the end");
        assert!(matches!(read(&f, 0, u64::MAX), Err(Unknown::NotElf(_))));
    }
}
