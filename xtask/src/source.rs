//! Which source the artifacts are built from: the commit, and whether the checkout has
//! changes git would put in them (modified tracked files, untracked files not ignored: the
//! Debian build copies both). The tool records it (`vdsotime --version`, through its
//! build.rs and `VDSOTIME_SOURCE`), and `target/packages/SOURCE` says it beside the
//! artifacts, so a build from a modified tree cannot pass for the commit's. The kernel
//! machines' tools are built with the same `VDSOTIME_SOURCE`: the build script then gives
//! what it gave `dist`'s build of the same target, and cargo reuses that build.

use std::path::Path;
use std::process::Command;

/// The commit and the changed paths (`git status --porcelain` lines).
pub struct Source {
    pub commit: String,
    pub changes: Vec<String>,
}

impl Source {
    /// The line the tool shows after `source: `.
    pub fn label(&self) -> String {
        if self.changes.is_empty() {
            format!("commit {}", self.commit)
        } else {
            format!(
                "commit {}, uncommitted changes ({} paths)",
                self.commit,
                self.changes.len()
            )
        }
    }

    /// The contents of `SOURCE`: the label, then every changed path.
    pub fn report(&self) -> String {
        let mut text = format!("{}\n", self.label());
        for change in &self.changes {
            text.push_str(change);
            text.push('\n');
        }
        text
    }
}

fn git(root: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(root)
        .output()
        .map_err(|e| format!("git {}: {e}", args.join(" ")))?;
    if !out.status.success() {
        return Err(format!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_string())
}

/// The source of the checkout at `root`.
pub fn of(root: &Path) -> Result<Source, String> {
    let commit = git(root, &["rev-parse", "HEAD"])?;
    let status = git(root, &["status", "--porcelain", "--untracked-files=all"])?;
    Ok(Source {
        commit,
        changes: status.lines().map(String::from).collect(),
    })
}
