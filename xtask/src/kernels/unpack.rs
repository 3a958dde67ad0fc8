//! A kernel package taken apart: its image, configuration and release (`uname -r`), from
//! either of Debian's layouts (`boot/vmlinuz-<ver>` before 7.x, `usr/lib/modules/<ver>/`
//! since), into the files a machine's cache directory keeps.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The files kept in a machine's cache directory.
pub const KERNEL: &str = "kernel";
pub const CONFIG: &str = "config";
pub const RELEASE: &str = "release";

/// Where a kernel package keeps its image and configuration (old layout, 7.x layout).
const MEMBERS: &[&str] = &[
    "./boot/vmlinu*",
    "./boot/config-*",
    "./usr/lib/modules/*/vmlinu*",
    "./usr/lib/modules/*/config",
];

/// Unpacks whichever of [`MEMBERS`] the package has into `dir/kernel`, `dir/config` and
/// `dir/release` (the `uname -r` in the file or directory name).
pub fn extract(deb: &Path, dir: &Path) -> Result<(), String> {
    let tmp = dir.join("unpacked");
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    let mut dpkg = Command::new("dpkg-deb")
        .arg("--fsys-tarfile")
        .arg(deb)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("dpkg-deb: {e}"))?;
    let tar_in = dpkg.stdout.take().ok_or("dpkg-deb: no stdout")?;
    // tar fails on a pattern the package lacks (each layout lacks two): what was found
    // is checked below instead.
    let _ = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(&tmp)
        .arg("--wildcards")
        .args(MEMBERS)
        .stdin(tar_in)
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("tar: {e}"))?;
    let dpkg = dpkg.wait().map_err(|e| e.to_string())?;
    if !dpkg.success() {
        return Err(format!("unpacking {}: dpkg-deb {dpkg}", deb.display()));
    }
    for (from, release) in found(&tmp) {
        let name = from.file_name().map(|n| n.to_string_lossy().into_owned());
        let to = if name.as_deref().is_some_and(|n| n.starts_with("config")) {
            CONFIG
        } else {
            fs::write(dir.join(RELEASE), &release).map_err(|e| e.to_string())?;
            KERNEL
        };
        fs::rename(&from, dir.join(to)).map_err(|e| format!("{}: {e}", from.display()))?;
    }
    let _ = fs::remove_dir_all(&tmp);
    Ok(())
}

/// (file, kernel release) of every image and configuration unpacked under `tmp`.
fn found(tmp: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let files = |d: PathBuf| -> Vec<PathBuf> {
        fs::read_dir(d)
            .map(|r| r.flatten().map(|e| e.path()).collect())
            .unwrap_or_default()
    };
    for f in files(tmp.join("boot")) {
        let name = f.file_name().map(|n| n.to_string_lossy().into_owned());
        let release = name.as_deref().and_then(|n| {
            ["vmlinuz-", "vmlinux-", "config-"]
                .iter()
                .find_map(|p| n.strip_prefix(p))
        });
        if let Some(r) = release.map(str::to_string) {
            out.push((f, r));
        }
    }
    for d in files(tmp.join("usr/lib/modules")) {
        let release = d.file_name().map(|n| n.to_string_lossy().into_owned());
        for f in files(d) {
            out.push((f, release.clone().unwrap_or_default()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_layouts_give_image_config_and_release() {
        let tmp = std::env::temp_dir().join(format!("xtask-unpack-{}", std::process::id()));
        let _ = fs::remove_dir_all(&tmp);
        for f in ["boot/vmlinuz-6.12.1-amd64", "boot/config-6.12.1-amd64"] {
            fs::create_dir_all(tmp.join(f).parent().unwrap()).unwrap();
            fs::write(tmp.join(f), "x").unwrap();
        }
        let dir = tmp.join("usr/lib/modules/7.0.3+bpo-amd64");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("vmlinuz"), "x").unwrap();
        let mut got: Vec<(String, String)> = found(&tmp)
            .into_iter()
            .map(|(f, r)| (f.strip_prefix(&tmp).unwrap().display().to_string(), r))
            .collect();
        got.sort();
        let want = [
            ("boot/config-6.12.1-amd64", "6.12.1-amd64"),
            ("boot/vmlinuz-6.12.1-amd64", "6.12.1-amd64"),
            ("usr/lib/modules/7.0.3+bpo-amd64/vmlinuz", "7.0.3+bpo-amd64"),
        ];
        assert_eq!(got, want.map(|(a, b)| (a.to_string(), b.to_string())));
        let _ = fs::remove_dir_all(&tmp);
    }
}
