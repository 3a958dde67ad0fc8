//! Building what runs inside a machine, static, for its target, as release builds: the
//! core's test binaries (`cargo test --release -p vdsotime --no-run`, with the environment
//! `cargo xtask cross` uses, so the two share their builds), the `vdsotime` tool and the
//! VM's init.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::runner;
use crate::targets::Target;

/// The programs of one target.
#[derive(Debug)]
pub struct Built {
    /// (label, executable): `unit` for the library's own tests, else the test file's name.
    pub tests: Vec<(String, PathBuf)>,
    pub cli: PathBuf,
    pub init: PathBuf,
}

/// Builds everything for `target`; cargo's output goes to `log`.
pub fn build(root: &Path, target: &Target, flags: &[String], log: &Path) -> Result<Built, String> {
    // The tests as `cargo xtask cross` builds them, so the binaries it built are reused;
    // the tool and the init as release builds too, sharing the core with the tests.
    let test_exes = cargo(
        root,
        target,
        flags,
        log,
        &[],
        &["test", "-p", "vdsotime", "--no-run", runner::RELEASE],
    )?;
    // The source named as `cargo xtask dist` names it, so that cargo reuses dist's static
    // tool (x86_64 and aarch64 musl) rather than building it again.
    let source = crate::source::of(root)?.label();
    let tools = cargo(
        root,
        target,
        flags,
        log,
        &[("VDSOTIME_SOURCE", source.as_str())],
        &[
            "build",
            runner::RELEASE,
            "-p",
            "vdsotime-cli",
            "-p",
            "vm-init",
        ],
    )?;
    let named = |name: &str| {
        tools
            .iter()
            .find(|p| p.file_name().is_some_and(|f| f == name))
            .cloned()
            .ok_or_else(|| format!("cargo built no {name} (see {})", log.display()))
    };
    let tests = test_exes
        .into_iter()
        .map(|exe| (label(&exe), exe))
        .collect::<Vec<_>>();
    if tests.is_empty() {
        return Err(format!(
            "cargo built no test binary (see {})",
            log.display()
        ));
    }
    Ok(Built {
        tests,
        cli: named("vdsotime")?,
        init: named("vm-init")?,
    })
}

/// The `top_overhead` benchmark of `vdsotime top` for `target` (see
/// [`super::top::overhead`]): built as the tool is ([`runner::RELEASE`], the same source
/// label), so that cargo reuses the tool and its dependencies.
pub fn overhead_bench(
    root: &Path,
    target: &Target,
    flags: &[String],
    log: &Path,
) -> Result<PathBuf, String> {
    let source = crate::source::of(root)?.label();
    let args = [
        "build",
        runner::RELEASE,
        "-p",
        "vdsotime-cli",
        "--bench",
        "top_overhead",
    ];
    cargo(
        root,
        target,
        flags,
        log,
        &[("VDSOTIME_SOURCE", source.as_str())],
        &args,
    )?
    .into_iter()
    .find(|exe| label(exe) == "top_overhead")
    .ok_or_else(|| format!("cargo built no top_overhead (see {})", log.display()))
}

/// `kernel_parity-0123456789abcdef` → `kernel_parity`; the library's unit tests → `unit`.
fn label(exe: &Path) -> String {
    let name = exe
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = match name.rsplit_once('-') {
        Some((stem, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            stem.to_string()
        }
        _ => name,
    };
    if stem == "vdsotime" {
        "unit".to_string()
    } else {
        stem
    }
}

/// Runs `cargo <args> --target T` with the environment `cargo xtask cross` builds with and `env`,
/// and returns the executables it reports.
fn cargo(
    root: &Path,
    target: &Target,
    flags: &[String],
    log: &Path,
    env: &[(&str, &str)],
    args: &[&str],
) -> Result<Vec<PathBuf>, String> {
    let mut cmd = cargo_command(root, log, args)?;
    cmd.args(["--target", target.triple]);
    runner::target_env(&mut cmd, target, flags, target.qemu.is_some());
    cmd.envs(env.iter().copied());
    Ok(artifacts(cmd, args, log)?
        .iter()
        // Test harnesses only: `cargo test` also builds the examples.
        .filter(|l| !args.contains(&"test") || l.contains("\"test\":true"))
        .filter_map(|l| executable(l))
        .collect())
}

/// Runs `cargo <args>` (for the host, or with the caller's `--target` in `args`) and
/// returns the files of the library it builds whose names end with `suffix`.
pub fn library(root: &Path, log: &Path, args: &[&str], suffix: &str) -> Result<PathBuf, String> {
    let cmd = cargo_command(root, log, args)?;
    artifacts(cmd, args, log)?
        .iter()
        .flat_map(|l| filenames(l))
        .find(|f| f.to_string_lossy().ends_with(suffix))
        .ok_or_else(|| format!("cargo {} built no *{suffix}", args.join(" ")))
}

/// `cargo <args>` in the workspace, its diagnostics to `log`, its messages as JSON.
fn cargo_command(root: &Path, log: &Path, args: &[&str]) -> Result<Command, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let err = File::options()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| format!("{}: {e}", log.display()))?;
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .args(args)
        .arg("--message-format=json-render-diagnostics")
        .env("CARGO_TERM_COLOR", "never")
        .stdin(Stdio::null())
        .stderr(err);
    Ok(cmd)
}

/// Runs `cmd`; its `compiler-artifact` messages.
fn artifacts(mut cmd: Command, args: &[&str], log: &Path) -> Result<Vec<String>, String> {
    let out = cmd.output().map_err(|e| format!("cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo {} failed (see {})",
            args.join(" "),
            log.display()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("\"reason\":\"compiler-artifact\""))
        .map(str::to_string)
        .collect())
}

/// The `"filenames":[...]` of one cargo JSON message (paths hold no quotes or escapes
/// in this workspace).
fn filenames(line: &str) -> Vec<PathBuf> {
    let Some(rest) = line.split("\"filenames\":[").nth(1) else {
        return Vec::new();
    };
    let list = rest.split(']').next().unwrap_or("");
    list.split(',')
        .map(|f| PathBuf::from(f.trim_matches('"')))
        .filter(|p| !p.as_os_str().is_empty())
        .collect()
}

/// The `"executable":"<path>"` of one cargo JSON message, if not null.
fn executable(line: &str) -> Option<PathBuf> {
    let rest = line.split("\"executable\":\"").nth(1)?;
    Some(PathBuf::from(rest.split('"').next()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_executables() {
        assert_eq!(
            label(Path::new("/t/deps/kernel_parity-0123456789abcdef")),
            "kernel_parity"
        );
        assert_eq!(
            label(Path::new("/t/deps/vdsotime-fedcba9876543210")),
            "unit"
        );
        assert_eq!(label(Path::new("/t/vm-init")), "vm-init");
        let msg = r#"{"reason":"compiler-artifact","executable":"/t/deps/a-0123456789abcdef","fresh":true}"#;
        assert_eq!(
            executable(msg),
            Some(PathBuf::from("/t/deps/a-0123456789abcdef"))
        );
        assert_eq!(executable(r#"{"executable":null}"#), None);
        let lib = r#"{"reason":"compiler-artifact","filenames":["/t/libp.so","/t/libp.rlib"],"executable":null}"#;
        assert_eq!(
            filenames(lib),
            [PathBuf::from("/t/libp.so"), PathBuf::from("/t/libp.rlib")]
        );
        assert!(filenames(r#"{"filenames":[]}"#).is_empty());
    }
}
