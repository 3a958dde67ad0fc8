//! `getrandom::fill` goes through vdsotime once the build sets the cfg, and only then,
//! for getrandom 0.3 and 0.4 alike, both in one program: examples/getrandom_probe, built
//! twice, run under strace, which counts the getrandom system calls of 10,000 calls
//! through each version between two marker system calls.
//!
//! - as `cargo test` builds it (no cfg): getrandom's own backends, one system call a call;
//! - built again by this test with `RUSTFLAGS='--cfg getrandom_backend="custom"'`, in a
//!   target directory of its own (`target/getrandom-custom-backend`, so the workspace's
//!   other builds, whose `rand` and `proptest` use getrandom's default backend, are never
//!   built with the cfg), `--locked --offline` (every crate it needs is already in the
//!   cache: the outer build just used them): none, where the vDSO has getrandom.
//!
//! A nested `cargo build` in a test is robust here because it shares nothing with the
//! outer build but the package cache, which cargo locks only while resolving.

#[path = "../../vdsotime/tests/getrandom_common/mod.rs"]
mod getrandom_common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use getrandom_common::{log_path, process, sections, skip, strace_args, strace_unusable};

const TEST: &str = "getrandom_fill_goes_through_vdsotime_with_the_custom_cfg";
const CALLS: usize = 10_000;

/// target/<profile>, from this test's executable in target/<profile>/deps.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>")
        .to_path_buf()
}

/// Runs the probe under strace; its output and the system calls between the markers.
fn count(probe: &Path, name: &str) -> (String, usize) {
    let log = log_path(name);
    let args = strace_args(&log);
    let out = process::output(
        Command::new(&args[0])
            .args(&args[1..])
            .arg(probe)
            .arg(CALLS.to_string()),
        Duration::from_secs(120),
    );
    assert!(out.status.success(), "{probe:?}: {out:?}");
    let counts = sections(&log);
    let _ = std::fs::remove_file(&log);
    assert_eq!(counts.len(), 3, "markers missing: {counts:?}");
    (
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        counts[1],
    )
}

/// Builds the probe with the custom-backend cfg and returns its path.
fn build_custom() -> PathBuf {
    let target_dir = profile_dir()
        .parent()
        .expect("target")
        .join("getrandom-custom-backend");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut rustflags = std::env::var("RUSTFLAGS").unwrap_or_default();
    rustflags.push_str(" --cfg getrandom_backend=\"custom\"");
    let out = process::output(
        Command::new(cargo)
            .args(["build", "--locked", "--offline", "-p", "vdsotime-getrandom"])
            .args(["--example", "getrandom_probe", "--target-dir"])
            .arg(&target_dir)
            .env("RUSTFLAGS", rustflags.trim())
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .current_dir(env!("CARGO_MANIFEST_DIR")),
        // A build from nothing, on a busy machine.
        Duration::from_secs(900),
    );
    assert!(
        out.status.success(),
        "cargo build with the custom cfg failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("warning"),
        "the custom build warns:\n{stderr}"
    );
    target_dir.join("debug/examples/getrandom_probe")
}

#[test]
fn getrandom_fill_goes_through_vdsotime_with_the_custom_cfg() {
    if let Some(why) = strace_unusable() {
        return skip(TEST, "strace", why);
    }
    let default_probe = profile_dir().join("examples/getrandom_probe");
    assert!(
        default_probe.is_file(),
        "{default_probe:?}: cargo test builds examples"
    );
    let (said, default_calls) = count(&default_probe, "default-backend");
    println!("{said}: {default_calls} getrandom syscalls");
    assert!(said.starts_with("backend: getrandom's default"), "{said}");
    assert_eq!(
        default_calls,
        2 * CALLS,
        "getrandom's own backends: one syscall a call"
    );

    let (said, custom_calls) = count(&build_custom(), "custom-backend");
    println!("{said}: {custom_calls} getrandom syscalls");
    assert!(said.starts_with("backend: vdsotime"), "{said}");
    let expected = if vdsotime::random::params().is_some() {
        0
    } else {
        2 * CALLS
    };
    assert_eq!(custom_calls, expected, "through vdsotime");
}
