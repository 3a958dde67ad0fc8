//! Records which source the tool was built from, for `vdsotime --version`: the
//! `VDSOTIME_SOURCE` environment variable when the release build sets it (`cargo xtask
//! dist` names the commit and whether the tree had changes), else the git commit of the
//! checkout being built, else a note that the source came without git (a crate tarball, a
//! source package).

use std::path::Path;
use std::process::Command;

/// The output of `git ARGS` in `dir`, trimmed, if git ran and succeeded.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=VDSOTIME_SOURCE");
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let dir = Path::new(&dir);
    let source = match std::env::var("VDSOTIME_SOURCE") {
        Ok(given) if !given.trim().is_empty() => given,
        _ => from_git(dir).unwrap_or_else(|| "no git commit (built from a source archive)".into()),
    };
    println!("cargo:rustc-env=VDSOTIME_SOURCE={source}");
}

/// `commit HASH` (with `, uncommitted changes` when `git status` shows any) of the checkout
/// `dir` is in, or None outside one. The build script runs again when HEAD, the branch or
/// the index moves; an edit left unstaged since the last run is not seen.
fn from_git(dir: &Path) -> Option<String> {
    // Only the project's own checkout: a crate unpacked inside another repository is not.
    let top = git(dir, &["rev-parse", "--show-toplevel"])?;
    if !Path::new(&top)
        .join("crates/vdsotime-cli/build.rs")
        .is_file()
    {
        return None;
    }
    let commit = git(dir, &["rev-parse", "HEAD"])?;
    let mut watched = vec![
        "HEAD".to_string(),
        "index".to_string(),
        "packed-refs".into(),
    ];
    watched.extend(git(dir, &["symbolic-ref", "-q", "HEAD"]));
    for path in watched {
        // --git-path answers relative to `dir`; a file that does not exist is not watched
        // (cargo would run the script on every build).
        let Some(file) = git(dir, &["rev-parse", "--git-path", &path]) else {
            continue;
        };
        let file = dir.join(file);
        if file.is_file() {
            println!("cargo:rerun-if-changed={}", file.display());
        }
    }
    let changes = git(dir, &["status", "--porcelain", "--untracked-files=no"])?;
    let state = if changes.is_empty() {
        ""
    } else {
        ", uncommitted changes"
    };
    Some(format!("commit {commit}{state}"))
}
