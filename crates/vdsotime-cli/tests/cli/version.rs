//! `vdsotime --version` names the source the tool was built from; `-V` is the version
//! alone.

use std::path::Path;
use std::process::Command;

use crate::{parts, run};

/// What `git` says in this crate's directory, if it runs there.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[test]
fn version_names_the_commit_it_was_built_from() {
    let version = env!("CARGO_PKG_VERSION");
    let (code, short, _) = parts(&run(&["-V"]));
    assert_eq!(
        (code, short.as_str()),
        (0, format!("vdsotime {version}\n").as_str())
    );
    let (code, long, err) = parts(&run(&["--version"]));
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = long.lines().collect();
    assert_eq!(lines.len(), 2, "{long}");
    assert_eq!(lines[0], format!("vdsotime {version}"));
    let source = lines[1].strip_prefix("source: ").expect("a source line");
    match std::env::var("VDSOTIME_SOURCE") {
        // A release build names what it was given (cargo xtask dist).
        Ok(given) if !given.trim().is_empty() => assert_eq!(source, given),
        _ => match git(&["rev-parse", "HEAD"]) {
            // Built here, from this checkout: its commit, as the build saw it.
            Some(head)
                if Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../../.git")
                    .exists() =>
            {
                assert!(source.starts_with(&format!("commit {head}")), "{source}");
            }
            _ => assert_eq!(
                source, "no git commit (built from a source archive)",
                "{long}"
            ),
        },
    }
}
