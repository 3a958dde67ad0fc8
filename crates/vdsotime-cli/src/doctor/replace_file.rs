//! `doctor --output FILE`: replaces FILE whole or not at all. The document is written to
//! a temporary file in FILE's directory (same file system, and a name node_exporter's
//! textfile collector ignores: it reads only `*.prom`), flushed to disk, then renamed over
//! FILE, so a scraper reads either the previous document or the new one, never half of
//! one; on any error the temporary file is removed and FILE is left as it was.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The temporary file beside `file`: hidden, named after it and this process.
fn temporary(file: &Path) -> Result<PathBuf, String> {
    let name = file
        .file_name()
        .ok_or_else(|| format!("{}: not a file name", file.display()))?;
    let mut tmp = std::ffi::OsString::from(".");
    tmp.push(name);
    tmp.push(format!(".{}.tmp", std::process::id()));
    Ok(file.with_file_name(tmp))
}

/// Writes `contents` to `tmp` (a new file, mode 0644 whatever the umask: node_exporter
/// runs as another user and must read it) and flushes it to disk.
fn write_new(tmp: &Path, contents: &[u8]) -> std::io::Result<()> {
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(tmp)?;
    f.set_permissions(fs::Permissions::from_mode(0o644))?;
    f.write_all(contents)?;
    f.sync_all()
}

/// Replaces `file` with `contents`; the error names the file and the failed step.
pub fn replace(file: &Path, contents: &[u8]) -> Result<(), String> {
    let tmp = temporary(file)?;
    let done = write_new(&tmp, contents)
        .map_err(|e| format!("cannot write {}: {e}", tmp.display()))
        .and_then(|()| {
            fs::rename(&tmp, file)
                .map_err(|e| format!("cannot rename {} to {}: {e}", tmp.display(), file.display()))
        });
    if done.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    done.map_err(|e| format!("{e} ({} left unchanged)", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_temporary_file_is_hidden_beside_the_target() {
        let tmp = temporary(Path::new("/var/lib/x/vdsotime.prom")).unwrap();
        let name = tmp.file_name().unwrap().to_str().unwrap();
        assert_eq!(tmp.parent(), Some(Path::new("/var/lib/x")));
        assert!(name.starts_with(".vdsotime.prom.") && name.ends_with(".tmp"));
        assert!(!name.ends_with(".prom"), "node_exporter would read it");
        assert!(temporary(Path::new("/")).is_err());
    }
}
