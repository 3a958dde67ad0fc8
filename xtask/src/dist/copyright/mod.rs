//! debian/copyright's list of the Rust crates statically linked into the packages:
//! `cargo xtask copyright` writes it from Cargo.lock (see [`crates`]), `--check` (and
//! `cargo xtask dist`, and this module's test) fails when it is out of date, so a crate
//! added to Cargo.lock cannot ship unlisted. The tarballs carry the same file, with musl,
//! which their static binaries also link.
//!
//! The file's hand-written parts stay as they are: the header, the project's own `Files: *`
//! paragraph and the `License:` paragraphs with the licence texts; only the `Files:`
//! paragraphs of the crates are generated.

mod crates;

use std::fs;
use std::path::Path;
use std::process::ExitCode;

use crate::toolchain;
use crates::Crate;

const FILE: &str = "debian/copyright";

/// The glob under which each crate's paragraph names its files: they are not in the source
/// package, Cargo fetches them at build time.
const CRATES_DIR: &str = "cargo-registry";

/// The paragraph for the musl C library, linked into the static tarballs only.
const MUSL: &str = "Files: musl/*
Copyright: 2005-2020 Rich Felker, et al.
License: MIT
Comment: musl, the C library statically linked into the static tool of the tarballs (the
 Rust toolchain's self-contained musl for the target); its COPYRIGHT file names every
 contributor.";

/// The licence expression of a Cargo manifest, as debian/copyright writes it.
fn dep5_license(spdx: &str) -> String {
    spdx.replace(
        "Apache-2.0 WITH LLVM-exception",
        "Apache-2.0 with LLVM exception",
    )
    .replace(" OR ", " or ")
    .replace(" AND ", " and ")
}

/// The paragraph of one crate.
fn paragraph(c: &Crate) -> Result<String, String> {
    let dir = crates::source_dir(&c.name, &c.version)?;
    let mut holders = crates::copyright_lines(&dir);
    let repository = crates::manifest_strings(&dir, "repository");
    let repository = repository.first().map(String::as_str).unwrap_or("");
    if holders.is_empty() {
        let authors = crates::manifest_strings(&dir, "authors");
        holders = if authors.is_empty() {
            vec![format!("the {} developers ({repository})", c.name)]
        } else {
            authors
        };
    }
    // In the order of SHIPPED, not alphabetical.
    let into: Vec<&str> = crates::SHIPPED
        .iter()
        .flat_map(|(_, packages)| packages.iter().copied())
        .filter(|p| c.into.contains(p))
        .collect();
    let origin = if repository.is_empty() {
        String::new()
    } else {
        format!(" ({repository})")
    };
    let comment = format!(
        "The Rust crate {} {}{origin}, statically linked into {}.",
        c.name,
        c.version,
        into.join(", ")
    );
    Ok(format!(
        "Files: {CRATES_DIR}/{}-{}/*\nCopyright: {}\nLicense: {}\nComment: {}",
        c.name,
        c.version,
        holders.join("\n "),
        dep5_license(&c.license),
        wrap(&comment, 88).join("\n ")
    ))
}

/// The words of `text` in lines of at most `width` characters (a longer word alone).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(line) if line.len() + 1 + word.len() <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// The file `current` with its crate paragraphs replaced by those of `linked`.
fn regenerate(current: &str, linked: &[String]) -> Result<String, String> {
    let paragraphs: Vec<&str> = current.trim_end().split("\n\n").collect();
    let generated = format!("Files: {CRATES_DIR}/");
    let (kept_head, rest): (Vec<&str>, Vec<&str>) = {
        let first_license = paragraphs
            .iter()
            .position(|p| p.starts_with("License:"))
            .ok_or(format!("{FILE} has no stand-alone License: paragraph"))?;
        (
            paragraphs[..first_license]
                .iter()
                .copied()
                .filter(|p| !p.starts_with(&generated))
                .collect(),
            paragraphs[first_license..].to_vec(),
        )
    };
    let mut out: Vec<&str> = kept_head;
    out.extend(linked.iter().map(String::as_str));
    out.extend(rest);
    Ok(out.join("\n\n") + "\n")
}

/// The file as it should be now.
fn expected(root: &Path) -> Result<(String, String), String> {
    let path = root.join(FILE);
    let current = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let linked = crates::linked(root)?;
    let paragraphs = linked
        .values()
        .map(paragraph)
        .collect::<Result<Vec<_>, _>>()?;
    Ok((current.clone(), regenerate(&current, &paragraphs)?))
}

/// The crates that `expected` lists and `current` does not, and the other way round.
fn difference(current: &str, expected: &str) -> (Vec<String>, Vec<String>) {
    let names = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.strip_prefix(&format!("Files: {CRATES_DIR}/")))
            .map(|l| l.trim_end_matches("/*").to_string())
            .collect()
    };
    let (now, should) = (names(current), names(expected));
    let missing = should
        .iter()
        .filter(|n| !now.contains(n))
        .cloned()
        .collect();
    let stale = now
        .iter()
        .filter(|n| !should.contains(n))
        .cloned()
        .collect();
    (missing, stale)
}

/// Fails, naming the crates, when debian/copyright is not what Cargo.lock makes it.
pub fn check(root: &Path) -> Result<(), String> {
    let (current, expected) = expected(root)?;
    if current == expected {
        return Ok(());
    }
    let (missing, stale) = difference(&current, &expected);
    Err(format!(
        "{FILE} is out of date with Cargo.lock (not listed: {missing:?}; no longer linked: \
         {stale:?}; or a crate's licence or copyright changed): run `cargo xtask copyright`"
    ))
}

/// The notices a static tarball carries: debian/copyright with musl's paragraph.
pub fn tarball_notices(root: &Path) -> Result<String, String> {
    let path = root.join(FILE);
    let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    regenerate_with(&text, MUSL)
}

/// `text` with `extra` added before the stand-alone License: paragraphs.
fn regenerate_with(text: &str, extra: &str) -> Result<String, String> {
    let at = text
        .find("\n\nLicense:")
        .ok_or(format!("{FILE} has no stand-alone License: paragraph"))?;
    Ok(format!("{}\n\n{extra}{}", &text[..at], &text[at..]))
}

const USAGE: &str = "usage: cargo xtask copyright [--check]

Writes the Rust crates statically linked into the packages (cargo tree over Cargo.lock:
normal dependencies of vdsotime-c, vdsotime-preload and vdsotime-cli for every shipped
target) into debian/copyright, with each crate's licence and copyright holders from its
own files in Cargo's registry.

  --check     write nothing; fail if debian/copyright is out of date
  -h, --help  this text";

pub fn main(args: &[String]) -> ExitCode {
    let root = toolchain::workspace_root();
    let result = match args.first().map(String::as_str) {
        Some("--check") => check(&root).map(|()| format!("{FILE} is up to date")),
        Some("-h" | "--help") => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        None => expected(&root).and_then(|(current, expected)| {
            let (missing, stale) = difference(&current, &expected);
            fs::write(root.join(FILE), expected)
                .map_err(|e| format!("{FILE}: {e}"))
                .map(|()| format!("{FILE} written (added {missing:?}, removed {stale:?})"))
        }),
        Some(other) => {
            eprintln!("xtask copyright: unknown argument {other}\n{USAGE}");
            return ExitCode::from(64);
        }
    };
    match result {
        Ok(said) => {
            println!("{said}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("xtask copyright: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crate added to Cargo.lock and linked into a package fails this until
    /// `cargo xtask copyright` lists it.
    #[test]
    fn debian_copyright_lists_every_linked_crate() {
        let root = toolchain::workspace_root();
        if let Err(e) = check(&root) {
            panic!("{e}");
        }
    }

    #[test]
    fn a_crate_missing_from_the_file_is_named() {
        let head = "Format: x\n\nFiles: *\nCopyright: us\nLicense: MIT";
        let tail = "License: MIT\n text";
        let listed = format!("Files: {CRATES_DIR}/a-1.0.0/*\nCopyright: x\nLicense: MIT");
        let extra = format!("Files: {CRATES_DIR}/b-2.0.0/*\nCopyright: y\nLicense: MIT");
        let current = format!("{head}\n\n{listed}\n\n{tail}\n");
        let expected = regenerate(&current, &[listed.clone(), extra.clone()]).expect("regenerated");
        assert_eq!(
            expected,
            format!("{head}\n\n{listed}\n\n{extra}\n\n{tail}\n")
        );
        let (missing, stale) = difference(&current, &expected);
        assert_eq!((missing, stale), (vec!["b-2.0.0".to_string()], vec![]));
        assert!(regenerate_with(&current, MUSL)
            .expect("musl")
            .contains("\n\nFiles: musl/*"));
        assert_eq!(
            dep5_license("Apache-2.0 WITH LLVM-exception OR Apache-2.0 OR MIT"),
            "Apache-2.0 with LLVM exception or Apache-2.0 or MIT"
        );
    }
}
