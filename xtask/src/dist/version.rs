//! The release version, from one place: `[workspace.package] version` in the root
//! Cargo.toml. The tool (`--version`) and the `.pc` files take it from there at build time;
//! debian/changelog must name the same version, and CHANGELOG.md have a section for it,
//! which is checked here before anything is built.

use std::fs;
use std::path::Path;

/// `version = "..."` of the `[workspace.package]` table of the manifest `text`.
pub fn workspace_version(text: &str) -> Option<String> {
    let mut in_table = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_table = line == "[workspace.package]";
        } else if in_table {
            if let Some((key, value)) = line.split_once('=') {
                if key.trim() == "version" {
                    return Some(value.trim().trim_matches('"').to_string());
                }
            }
        }
    }
    None
}

/// The upstream part of the newest entry's version in debian/changelog `text`: `0.1.0` of
/// `vdsotime (0.1.0) unstable; ...` or of `(0.1.0-1)`, without an epoch.
pub fn changelog_version(text: &str) -> Option<String> {
    let first = text.lines().next()?;
    let inside = first.split_once('(')?.1.split_once(')')?.0;
    let no_epoch = inside.split_once(':').map_or(inside, |(_, v)| v);
    let upstream = no_epoch.rsplit_once('-').map_or(no_epoch, |(v, _)| v);
    Some(upstream.to_string())
}

/// The workspace version, once debian/changelog is checked to name it too.
pub fn checked(root: &Path) -> Result<String, String> {
    let read = |name: &str| fs::read_to_string(root.join(name)).map_err(|e| format!("{name}: {e}"));
    let version = workspace_version(&read("Cargo.toml")?)
        .ok_or("Cargo.toml has no [workspace.package] version")?;
    let packaged = changelog_version(&read("debian/changelog")?)
        .ok_or("debian/changelog: its first line names no version")?;
    if packaged != version {
        return Err(format!(
            "debian/changelog's newest entry is version {packaged}, Cargo.toml's workspace \
             version is {version}: add a changelog entry for {version} (dch -v {version}) \
             before building the release"
        ));
    }
    let heading = format!("## [{version}]");
    if !read("CHANGELOG.md")?
        .lines()
        .any(|l| l.starts_with(&heading))
    {
        return Err(format!(
            "CHANGELOG.md has no section `{heading} - DATE` for the version being packaged"
        ));
    }
    Ok(version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_version_is_read_from_its_table_only() {
        let text = "[package]\nversion = \"9.9.9\"\n[workspace.package]\nedition = \"2021\"\n\
                    version = \"0.3.1\"\n[workspace.dependencies]\nversion = \"1\"\n";
        assert_eq!(workspace_version(text).as_deref(), Some("0.3.1"));
        assert_eq!(workspace_version("[package]\nversion = \"1\"\n"), None);
    }

    #[test]
    fn changelog_versions_lose_epoch_and_revision() {
        let v = |s: &str| changelog_version(s);
        assert_eq!(
            v("vdsotime (0.1.0) unstable; urgency=medium\n").as_deref(),
            Some("0.1.0")
        );
        assert_eq!(
            v("vdsotime (0.2.0-3) unstable; urgency=low").as_deref(),
            Some("0.2.0")
        );
        assert_eq!(
            v("vdsotime (1:0.2.0-1) unstable; urgency=low").as_deref(),
            Some("0.2.0")
        );
        assert_eq!(v("garbage"), None);
    }

    #[test]
    fn this_repository_agrees() {
        let root = crate::toolchain::workspace_root();
        assert!(checked(&root).is_ok(), "{:?}", checked(&root));
    }
}
