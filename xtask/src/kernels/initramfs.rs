//! The initramfs: an uncompressed cpio archive in the kernel's `newc` format
//! (Documentation/driver-api/early-userspace/buffer-format.rst), written here rather than
//! with `cpio`, which the machine may lack and which cannot add a device node as non-root.
//!
//! Every entry's parent directories are added first: the kernel creates none itself.

use std::collections::BTreeSet;
use std::path::Path;

const S_IFDIR: u32 = 0o040000;
const S_IFREG: u32 = 0o100000;
const S_IFLNK: u32 = 0o120000;
const S_IFCHR: u32 = 0o020000;

/// An archive being built in memory.
#[derive(Debug, Default)]
pub struct Archive {
    bytes: Vec<u8>,
    dirs: BTreeSet<String>,
    inode: u32,
}

impl Archive {
    /// A directory (and its parents), once.
    pub fn dir(&mut self, path: &str) {
        let path = path.trim_matches('/');
        if path.is_empty() || self.dirs.contains(path) {
            return;
        }
        if let Some((parent, _)) = path.rsplit_once('/') {
            self.dir(parent);
        }
        self.dirs.insert(path.to_string());
        self.entry(path, S_IFDIR | 0o755, (0, 0), &[]);
    }

    /// A regular file with `mode`'s permission bits.
    pub fn file(&mut self, path: &str, mode: u32, data: &[u8]) {
        self.parents(path);
        self.entry(path.trim_start_matches('/'), S_IFREG | mode, (0, 0), data);
    }

    /// A file copied from the host.
    pub fn copy(&mut self, path: &str, from: &Path, mode: u32) -> Result<(), String> {
        let data = std::fs::read(from).map_err(|e| format!("{}: {e}", from.display()))?;
        self.file(path, mode, &data);
        Ok(())
    }

    /// A symbolic link to `target`.
    pub fn symlink(&mut self, path: &str, target: &str) {
        self.parents(path);
        self.entry(
            path.trim_start_matches('/'),
            S_IFLNK | 0o777,
            (0, 0),
            target.as_bytes(),
        );
    }

    /// A character device node.
    pub fn char_device(&mut self, path: &str, major: u32, minor: u32) {
        self.parents(path);
        self.entry(
            path.trim_start_matches('/'),
            S_IFCHR | 0o600,
            (major, minor),
            &[],
        );
    }

    /// The archive with its trailer.
    pub fn finish(mut self) -> Vec<u8> {
        self.entry("TRAILER!!!", 0, (0, 0), &[]);
        self.bytes
    }

    fn parents(&mut self, path: &str) {
        if let Some((parent, _)) = path.trim_start_matches('/').rsplit_once('/') {
            self.dir(parent);
        }
    }

    /// One header, name and data, each padded to 4 bytes.
    fn entry(&mut self, name: &str, mode: u32, rdev: (u32, u32), data: &[u8]) {
        self.inode += 1;
        let nlink = if mode & S_IFDIR != 0 { 2 } else { 1 };
        let fields = [
            self.inode,
            mode,
            0, // uid
            0, // gid
            nlink,
            0, // mtime: reproducible archives
            u32::try_from(data.len()).unwrap_or(u32::MAX),
            0, // devmajor
            0, // devminor
            rdev.0,
            rdev.1,
            u32::try_from(name.len() + 1).unwrap_or(u32::MAX),
            0, // check
        ];
        self.bytes.extend_from_slice(b"070701");
        for f in fields {
            self.bytes.extend_from_slice(format!("{f:08x}").as_bytes());
        }
        self.bytes.extend_from_slice(name.as_bytes());
        self.bytes.push(0);
        self.pad();
        self.bytes.extend_from_slice(data);
        self.pad();
    }

    fn pad(&mut self) {
        while self.bytes.len() % 4 != 0 {
            self.bytes.push(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (name, mode, data) of every entry, read back as the kernel's unpacker would.
    fn entries(bytes: &[u8]) -> Vec<(String, u32, Vec<u8>)> {
        let mut out = Vec::new();
        let mut at = 0;
        let field = |at: usize, i: usize| {
            let s = std::str::from_utf8(&bytes[at + 6 + 8 * i..at + 14 + 8 * i]).unwrap();
            u32::from_str_radix(s, 16).unwrap() as usize
        };
        loop {
            assert_eq!(&bytes[at..at + 6], b"070701");
            let (mode, size, namesize) = (field(at, 1), field(at, 6), field(at, 11));
            let name_at = at + 110;
            let name = String::from_utf8(bytes[name_at..name_at + namesize - 1].to_vec()).unwrap();
            let data_at = (name_at + namesize).next_multiple_of(4);
            let data = bytes[data_at..data_at + size].to_vec();
            at = (data_at + size).next_multiple_of(4);
            if name == "TRAILER!!!" {
                assert_eq!(at, bytes.len());
                return out;
            }
            out.push((name, mode as u32, data));
        }
    }

    #[test]
    fn parents_first_then_entries_then_trailer() {
        let mut a = Archive::default();
        a.file("/bin/x", 0o755, b"abc");
        a.symlink("/bin/true", "/init");
        a.char_device("/dev/console", 5, 1);
        a.dir("/bin");
        let e = entries(&a.finish());
        let names: Vec<&str> = e.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_eq!(names, ["bin", "bin/x", "bin/true", "dev", "dev/console"]);
        assert_eq!(e[1].1, S_IFREG | 0o755);
        assert_eq!(e[1].2, b"abc");
        assert_eq!(
            (e[2].1, e[2].2.as_slice()),
            (S_IFLNK | 0o777, &b"/init"[..])
        );
        assert_eq!(e[4].1, S_IFCHR | 0o600);
    }
}
