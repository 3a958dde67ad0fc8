//! The crates statically linked into each shipped binary, and who holds their copyright:
//! `cargo tree` resolves them from Cargo.lock (normal dependencies, no proc-macro, for
//! every target we ship), and each crate's own files in Cargo's registry say the rest.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace crates whose builds are shipped, and the Debian packages (or tarball)
/// that carry each.
pub const SHIPPED: &[(&str, &[&str])] = &[
    ("vdsotime-c", &["libvdsotime0", "libvdsotime-dev"]),
    ("vdsotime-preload", &["libvdsotime-preload"]),
    ("vdsotime-cli", &["vdsotime", "the static tool tarballs"]),
];

/// The targets the packages and tarballs are built for.
pub const TARGETS: &[&str] = &[
    "x86_64-unknown-linux-gnu",
    "aarch64-unknown-linux-gnu",
    "x86_64-unknown-linux-musl",
    "aarch64-unknown-linux-musl",
];

/// One linked crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crate {
    pub name: String,
    pub version: String,
    /// The SPDX expression of its manifest.
    pub license: String,
    /// Where it is linked (from [`SHIPPED`]).
    pub into: BTreeSet<&'static str>,
}

/// Every registry crate linked into a shipped binary, by (name, version). Path
/// dependencies (the workspace's own crates) are the project's and are left out.
pub fn linked(root: &Path) -> Result<BTreeMap<(String, String), Crate>, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut out: BTreeMap<(String, String), Crate> = BTreeMap::new();
    for (package, into) in SHIPPED {
        for target in TARGETS {
            let result = Command::new(&cargo)
                .args([
                    "tree",
                    "--locked",
                    "--offline",
                    "-e",
                    "normal,no-proc-macro",
                ])
                .args(["--prefix", "none", "--format", "{p}|{l}", "-p", package])
                .args(["--target", target])
                .current_dir(root)
                .output()
                .map_err(|e| format!("cargo tree: {e}"))?;
            if !result.status.success() {
                return Err(format!(
                    "cargo tree -p {package} --target {target}: {}",
                    String::from_utf8_lossy(&result.stderr)
                ));
            }
            for line in String::from_utf8_lossy(&result.stdout).lines() {
                let Some(c) = parse_tree_line(line) else {
                    continue;
                };
                let entry = out.entry((c.name.clone(), c.version.clone())).or_insert(c);
                entry.into.extend(into.iter().copied());
            }
        }
    }
    Ok(out)
}

/// `clap v4.6.9|MIT OR Apache-2.0` (a registry crate), or None for a path dependency
/// (`vdsotime v0.1.0 (/path)`) or a line that is not a package.
fn parse_tree_line(line: &str) -> Option<Crate> {
    let (package, license) = line.split_once('|')?;
    let package = package.trim().trim_end_matches(" (*)");
    if package.contains(" (") {
        return None;
    }
    let (name, version) = package.split_once(" v")?;
    Some(Crate {
        name: name.to_string(),
        version: version.to_string(),
        license: license.trim().to_string(),
        into: BTreeSet::new(),
    })
}

/// The crate's unpacked source in Cargo's registry.
pub fn source_dir(name: &str, version: &str) -> Result<PathBuf, String> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .ok_or("neither CARGO_HOME nor HOME is set")?;
    let src = home.join("registry/src");
    let indexes = fs::read_dir(&src).map_err(|e| format!("{}: {e}", src.display()))?;
    let dir_name = format!("{name}-{version}");
    indexes
        .flatten()
        .map(|index| index.path().join(&dir_name))
        .find(|dir| dir.join("Cargo.toml").is_file())
        .ok_or_else(|| format!("{dir_name} is not in {} (cargo fetch)", src.display()))
}

/// The copyright statements of the crate's licence and copyright files (`Copyright (c)
/// 2019 Arne Beer`), without the templates of the licence texts (`[yyyy] [name]`).
pub fn copyright_lines(dir: &Path) -> Vec<String> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    let mut lines = BTreeSet::new();
    for file in files {
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().to_uppercase())
            .unwrap_or_default();
        let notice = ["LICENSE", "LICENCE", "COPYRIGHT", "COPYING", "NOTICE"];
        if !notice.iter().any(|n| name.starts_with(n)) {
            continue;
        }
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        for line in text.lines() {
            let line = line.trim().trim_start_matches("//").trim();
            if let Some(statement) = statement(line) {
                lines.insert(statement);
            }
        }
    }
    lines.into_iter().collect()
}

/// A copyright statement, without the word and the sign: `2019 Arne Beer` of
/// `Copyright (c) 2019 Arne Beer`; None for any other line.
fn statement(line: &str) -> Option<String> {
    if line.contains('[') || line.contains('{') {
        return None;
    }
    if line.starts_with("Copyrights in the") {
        return Some(line.to_string());
    }
    let rest = line.strip_prefix("Copyright")?.trim_start();
    let rest = rest
        .strip_prefix("(c)")
        .or_else(|| rest.strip_prefix("(C)"))
        .or_else(|| rest.strip_prefix('©'))
        .unwrap_or(rest)
        .trim();
    let starts_well = rest.starts_with(|c: char| c.is_ascii_digit()) || line.contains("(c)");
    (starts_well && !rest.is_empty()).then(|| rest.to_string())
}

/// The value of `key = "..."` or the strings of `key = [...]` in the crate's Cargo.toml
/// `[package]` table.
pub fn manifest_strings(dir: &Path, key: &str) -> Vec<String> {
    let Ok(text) = fs::read_to_string(dir.join("Cargo.toml")) else {
        return Vec::new();
    };
    let mut in_package = false;
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[package]";
            continue;
        }
        let Some((k, value)) = line.split_once('=') else {
            continue;
        };
        if !in_package || k.trim() != key {
            continue;
        }
        let mut value = value.trim().to_string();
        if value.starts_with('[') {
            while !value.contains(']') {
                let Some(next) = lines.next() else { break };
                value.push_str(next.trim());
            }
        }
        return value
            .split('"')
            .skip(1)
            .step_by(2)
            .map(String::from)
            .collect();
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_lines_and_statements() {
        let c = parse_tree_line("clap v4.6.9|MIT OR Apache-2.0").expect("a crate");
        assert_eq!((c.name.as_str(), c.version.as_str()), ("clap", "4.6.9"));
        assert_eq!(c.license, "MIT OR Apache-2.0");
        assert!(parse_tree_line("rustix v1.1.6|MIT (*)").is_some());
        assert!(parse_tree_line("vdsotime v0.1.0 (/src/crates/vdsotime)|MIT").is_none());
        assert_eq!(
            statement("Copyright (c) 2019 Arne Beer").as_deref(),
            Some("2019 Arne Beer")
        );
        assert_eq!(
            statement("Copyright (c) Individual contributors").as_deref(),
            Some("Individual contributors")
        );
        assert_eq!(
            statement("Copyright [yyyy] [name of copyright owner]"),
            None
        );
        assert_eq!(
            statement("copyright notice and this permission notice"),
            None
        );
        assert_eq!(statement("Copyright owner or entity authorized"), None);
    }
}
