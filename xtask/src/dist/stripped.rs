//! The packaged preload is stripped (dh_strip): no symbol table, no debug section, in the
//! package of every architecture. Checked on the host, whose `readelf` reads any
//! architecture's objects (the arm64 fresh root has no binutils).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The shared object the preload's package installs.
const PRELOAD: &str = "libvdsotime_preload.so";

/// Checks the preload in each of `debs` that holds it; unpacks them under `work`.
pub fn check(debs: &[PathBuf], work: &Path) -> Result<(), String> {
    let preloads: Vec<&PathBuf> = debs
        .iter()
        .filter(|d| {
            d.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("libvdsotime-preload_"))
        })
        .collect();
    if preloads.is_empty() {
        return Err("no libvdsotime-preload package among the packages built".into());
    }
    for deb in preloads {
        let name = deb.file_stem().unwrap_or_default().to_string_lossy();
        let dir = work.join(format!("stripped-{name}"));
        let _ = fs::remove_dir_all(&dir);
        run(Command::new("dpkg-deb").arg("-x").arg(deb).arg(&dir))?;
        let so = find(&dir).ok_or_else(|| format!("{}: no {PRELOAD}", deb.display()))?;
        let sections = run(Command::new("readelf").args(["-S", "--wide"]).arg(&so))?;
        let mut unstripped: Vec<&str> = sections
            .split_whitespace()
            .filter(|w| *w == ".symtab" || w.starts_with(".debug_"))
            .collect();
        unstripped.dedup();
        if !unstripped.is_empty() {
            return Err(format!(
                "{}: {} is not stripped: {}",
                deb.display(),
                so.display(),
                unstripped.join(" ")
            ));
        }
        println!("{name}: {PRELOAD} stripped (no .symtab, no .debug_* section)");
    }
    Ok(())
}

/// The first file named [`PRELOAD`] below `dir`.
fn find(dir: &Path) -> Option<PathBuf> {
    for entry in fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = find(&path) {
                return Some(found);
            }
        } else if entry.file_name() == PRELOAD {
            return Some(path);
        }
    }
    None
}

/// `cmd`'s standard output, or why it failed.
fn run(cmd: &mut Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd:?}: {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
