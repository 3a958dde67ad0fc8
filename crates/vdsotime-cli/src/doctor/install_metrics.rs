//! `doctor --install-metrics SRC --output DST`: the privileged half of the service. The
//! doctor runs unprivileged and writes its metrics into its own runtime directory; this
//! step, run as root by `ExecStartPost=+`, installs that file as DST through
//! [`super::replace_file`]: a temporary name node_exporter ignores, flushed to disk, mode
//! 0644, owned by the caller, renamed. The unprivileged part never holds write access to
//! the shared textfile directory.
//!
//! The service owns SRC's directory and everything in it, so this step trusts nothing it
//! finds there. SRC is opened without following any link ([`super::no_links`]: no root-only
//! file read through one), non-blocking (a FIFO blocks in `open` itself), and must then be
//! a regular file with no other name (no device, no FIFO, no hard link to another file).
//! At most [`MAX_BYTES`] are read. Only a whole document of the doctor whose every family
//! is a `vdsotime_` one is installed: no other exporter's series pass through. Any refusal
//! leaves DST as it was and says why on stderr (the journal).

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

use rustix::fs::OFlags;

use super::{no_links, replace_file};

/// How the line naming a judged profile starts (after `# ` in a metrics document).
pub const HEADER_START: &str = "doctor: ";

/// The first bytes of every document `doctor --format prometheus` writes.
const HEAD: &str = "# HELP vdsotime_doctor_info ";

/// The prefix of every family the doctor writes.
const FAMILY_PREFIX: &str = "vdsotime_";

/// The most SRC may hold. The doctor's document, `--metrics full` on a machine with many
/// clocks and findings included, is a few tens of KiB; a MiB leaves room for growth and
/// bounds what root reads from a file the service wrote.
pub const MAX_BYTES: u64 = 1 << 20;

/// Whether `text` is a whole metrics document of the doctor: its first family (after the
/// comment that names a saved profile, when one was judged), and a last line that ends.
fn whole(text: &str) -> bool {
    let body = text
        .strip_prefix("# ")
        .and_then(|rest| rest.strip_prefix(HEADER_START))
        .and_then(|rest| rest.split_once('\n'))
        .map_or(text, |(_, body)| body);
    body.starts_with(HEAD) && text.ends_with('\n')
}

/// The family a line names: a sample's metric name, or the name of a `# HELP` or
/// `# TYPE` line; none for a blank line or another comment.
fn family(line: &str) -> Option<&str> {
    match line.strip_prefix('#') {
        Some(comment) => {
            let mut words = comment.split_whitespace();
            match words.next() {
                Some("HELP" | "TYPE") => Some(words.next().unwrap_or("")),
                _ => None,
            }
        }
        None if line.trim().is_empty() => None,
        None => Some(line.split(['{', ' ', '\t']).next().unwrap_or("")),
    }
}

/// The first line (1-based) naming a family that is not the doctor's, and that name.
fn foreign(text: &str) -> Option<(usize, &str)> {
    let ours = |name: &str| {
        name.strip_prefix(FAMILY_PREFIX).is_some_and(|rest| {
            !rest.is_empty()
                && rest
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_:".contains(c))
        })
    };
    text.lines()
        .enumerate()
        .find_map(|(i, line)| family(line).filter(|n| !ours(n)).map(|n| (i + 1, n)))
}

/// What a file that is not a regular one is, for the refusal.
fn kind(t: std::fs::FileType) -> &'static str {
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_dir() {
        "a directory"
    } else {
        "not a plain file"
    }
}

/// Reads SRC as the module's documentation says, or says why not.
fn read(src: &Path) -> Result<String, String> {
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY;
    let fd = no_links::open(src, flags).map_err(|e| {
        if no_links::is_link(&e) {
            "refused: it is, or its path passes through, a symbolic link".to_string()
        } else {
            format!("cannot open: {e}")
        }
    })?;
    let mut f = File::from(fd);
    let meta = f.metadata().map_err(|e| format!("cannot fstat: {e}"))?;
    if !meta.file_type().is_file() {
        return Err(format!(
            "refused: not a regular file ({})",
            kind(meta.file_type())
        ));
    }
    if meta.nlink() != 1 {
        return Err(format!(
            "refused: the file has {} names (hard links)",
            meta.nlink()
        ));
    }
    let mut bytes = Vec::new();
    (&mut f)
        .take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(format!("refused: larger than {MAX_BYTES} bytes"));
    }
    String::from_utf8(bytes).map_err(|_| "refused: not UTF-8 text".to_string())
}

/// Installs the metrics in `src` as `dst`; on any error `dst` keeps its contents.
pub fn install(src: &Path, dst: &Path) -> Result<(), String> {
    let refuse = |why: String| {
        format!(
            "{}: {why} ({} left unchanged)",
            src.display(),
            dst.display()
        )
    };
    let text = read(src).map_err(refuse)?;
    if !whole(&text) {
        return Err(refuse(
            "not a whole `vdsotime doctor --format prometheus` document".to_string(),
        ));
    }
    if let Some((line, name)) = foreign(&text) {
        return Err(refuse(format!(
            "refused: line {line} names the family `{name}`, not one of the doctor's \
             ({FAMILY_PREFIX}*)"
        )));
    }
    replace_file::replace(dst, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_whole_document_is_installed() {
        assert!(whole(
            "# HELP vdsotime_doctor_info x\nvdsotime_doctor_info 1\n"
        ));
        assert!(!whole("# HELP vdsotime_doctor_info x\nvdsotime_doc"));
        assert!(!whole(""));
        assert!(whole(
            "# doctor: judging the saved profile p.json, taken on Linux 6.1 (x86_64)\n\
             # HELP vdsotime_doctor_info x\nvdsotime_doctor_info 1\n"
        ));
        assert!(!whole("# doctor: judging\n"));
        assert!(!whole("node_cpu 1\n"));
    }

    #[test]
    fn every_family_must_be_the_doctors() {
        let own = "# doctor: judging p.json\n# HELP vdsotime_a x y\n# TYPE vdsotime_a gauge\n\
                   vdsotime_a{k=\"node_x 1\"} 1\n\nvdsotime_b 2\n";
        assert_eq!(foreign(own), None);
        for (text, line, name) in [
            ("vdsotime_a 1\nnode_x 1\n", 2, "node_x"),
            ("# HELP node_x help\n", 1, "node_x"),
            ("#TYPE node_x gauge\n", 1, "node_x"),
            ("vdsotime_ 1\n", 1, "vdsotime_"),
            ("vdsotime_a-b 1\n", 1, "vdsotime_a-b"),
            (" node_x 1\n", 1, ""),
            ("# HELP\n", 1, ""),
        ] {
            assert_eq!(foreign(text), Some((line, name)), "{text:?}");
        }
    }
}
