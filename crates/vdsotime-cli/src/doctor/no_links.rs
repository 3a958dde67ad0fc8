//! Opening a path that another user may have laid out, without following a symbolic link
//! anywhere in it. The privileged install step reads a file in the doctor's runtime
//! directory, which the unprivileged service owns: a link there (to a file only root may
//! read, to `/dev/zero`), or a directory of the path swapped for one, must be refused,
//! not followed.
//!
//! `openat2(2)` with `RESOLVE_NO_SYMLINKS` resolves the whole path in the kernel, in one
//! call, and fails with `ELOOP` at the first link (magic links in `/proc` included).
//! Kernels before 5.6 lack `openat2` (`ENOSYS`); there each component is opened in turn
//! from the directory opened before it, with `O_NOFOLLOW`, which refuses a link in the
//! same way: no component is resolved twice, so none can be swapped between a check and
//! its use.

use std::ffi::OsStr;
use std::io;
use std::path::{Component, Path};

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{FileType, Mode, OFlags, ResolveFlags, CWD};
use rustix::io::Errno;

/// Opens `path` with `flags` (plus `O_CLOEXEC`), refusing any symbolic link in it.
pub fn open(path: &Path, flags: OFlags) -> io::Result<OwnedFd> {
    let resolve = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    match rustix::fs::openat2(CWD, path, flags | OFlags::CLOEXEC, Mode::empty(), resolve) {
        Err(Errno::NOSYS) => walk(path, flags),
        done => done.map_err(io::Error::from),
    }
}

/// Whether `e` is the refusal of a symbolic link ([`open`]'s `ELOOP`).
pub fn is_link(e: &io::Error) -> bool {
    e.raw_os_error() == Some(Errno::LOOP.raw_os_error())
}

/// The directory opened so far, or the working directory before any.
fn at(dir: &Option<OwnedFd>) -> BorrowedFd<'_> {
    dir.as_ref().map_or(CWD, AsFd::as_fd)
}

/// The directory `name` in `dir`, or `ELOOP` for a link. Opened with `O_PATH` and
/// `O_NOFOLLOW`, a link yields a descriptor of the link itself, which `fstat` tells apart.
fn directory(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<OwnedFd> {
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, name, flags, Mode::empty())?;
    match FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode) {
        FileType::Directory => Ok(fd),
        FileType::Symlink => Err(Errno::LOOP.into()),
        _ => Err(Errno::NOTDIR.into()),
    }
}

/// [`open`] without `openat2`: each directory of `path` opened without following a link from
/// the one before, then the last component with `flags` and `O_NOFOLLOW`.
fn walk(path: &Path, flags: OFlags) -> io::Result<OwnedFd> {
    let mut names: Vec<&OsStr> = Vec::new();
    let mut dir: Option<OwnedFd> = None;
    for c in path.components() {
        match c {
            Component::RootDir => dir = Some(directory(CWD, OsStr::new("/"))?),
            Component::CurDir => {}
            Component::ParentDir => names.push(OsStr::new("..")),
            Component::Normal(name) => names.push(name),
            Component::Prefix(_) => return Err(io::ErrorKind::InvalidInput.into()),
        }
    }
    let last = names
        .pop()
        .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    for name in names {
        dir = Some(directory(at(&dir), name)?);
    }
    let last_flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(at(&dir), last, last_flags, Mode::empty())?;
    Ok(fd)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both ways refuse a link as the file and as a directory of the path, and open a
    /// path without one.
    #[test]
    fn a_link_anywhere_in_the_path_is_refused() {
        let base = std::env::temp_dir().join(format!("vdsotime-no-links-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("real")).unwrap();
        std::fs::write(base.join("real/file"), "x").unwrap();
        std::os::unix::fs::symlink(base.join("real"), base.join("dir-link")).unwrap();
        std::os::unix::fs::symlink(base.join("real/file"), base.join("real/file-link")).unwrap();
        let flags = OFlags::RDONLY | OFlags::NONBLOCK;
        for way in [open, walk] {
            assert!(way(&base.join("real/file"), flags).is_ok());
            for linked in ["dir-link/file", "real/file-link"] {
                let e = way(&base.join(linked), flags).unwrap_err();
                assert!(is_link(&e), "{linked}: {e}");
            }
        }
        std::fs::remove_dir_all(&base).unwrap();
    }
}
