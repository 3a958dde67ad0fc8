//! `doctor --output FILE`: replaces FILE whole or not at all. FILE's directory is opened
//! once, and every later step names a file in that open directory: the document is
//! written to a new temporary file there (same file system, and a name node_exporter's
//! textfile collector ignores: it reads only `*.prom`), created exclusively and without
//! following a link, flushed to disk, then renamed over FILE. A rename replaces the name
//! itself, so a link at FILE is replaced, never written through. A scraper reads either
//! the previous document or the new one, never half of one; on any error the temporary
//! file is removed and FILE is left as it was.
//!
//! The directory's own path may pass through links (`/var/lib` may be one on a host):
//! it is the administrator's, named in the unit or on the command line.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, Mode, OFlags};

/// The temporary file's name beside `name`: hidden, named after it and this process.
fn temporary(name: &OsStr) -> OsString {
    let mut tmp = OsString::from(".");
    tmp.push(name);
    tmp.push(format!(".{}.tmp", std::process::id()));
    tmp
}

/// Writes `contents` to the new file `tmp` in `dir` (mode 0644 whatever the umask:
/// node_exporter runs as another user and must read it) and flushes it to disk.
fn write_new(dir: &OwnedFd, tmp: &OsStr, contents: &[u8]) -> io::Result<()> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
    let fd = rustix::fs::openat(dir, tmp, flags | OFlags::CLOEXEC, Mode::from(0o644))?;
    let mut f = File::from(fd);
    f.set_permissions(std::fs::Permissions::from_mode(0o644))?;
    f.write_all(contents)?;
    f.sync_all()
}

/// Replaces `file` with `contents`; the error names the file and the failed step.
pub fn replace(file: &Path, contents: &[u8]) -> Result<(), String> {
    let unchanged = |e: String| format!("{e} ({} left unchanged)", file.display());
    let name = file
        .file_name()
        .ok_or_else(|| unchanged(format!("{}: not a file name", file.display())))?;
    let parent = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let dir = rustix::fs::open(parent, flags, Mode::empty()).map_err(|e| {
        unchanged(format!(
            "cannot open {}: {}",
            parent.display(),
            io::Error::from(e)
        ))
    })?;
    let tmp = temporary(name);
    let shown = parent.join(&tmp);
    let done = write_new(&dir, &tmp, contents)
        .map_err(|e| format!("cannot write {}: {e}", shown.display()))
        .and_then(|()| {
            rustix::fs::renameat(&dir, &tmp, &dir, name).map_err(|e| {
                let e = io::Error::from(e);
                format!(
                    "cannot rename {} to {}: {e}",
                    shown.display(),
                    file.display()
                )
            })
        });
    if done.is_err() {
        let _ = rustix::fs::unlinkat(&dir, &tmp, AtFlags::empty());
    }
    done.map_err(unchanged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_temporary_file_is_hidden_beside_the_target() {
        let tmp = temporary(OsStr::new("vdsotime.prom"));
        let name = tmp.to_str().unwrap();
        assert!(name.starts_with(".vdsotime.prom.") && name.ends_with(".tmp"));
        assert!(!name.ends_with(".prom"), "node_exporter would read it");
        assert!(replace(Path::new("/"), b"x").is_err());
    }
}
