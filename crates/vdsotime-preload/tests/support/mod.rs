//! Shared by the preload tests: where cargo put libvdsotime_preload.so, compiling C programs
//! with the machine's `cc`, and running programs with and without the preload, with a timeout
//! (the core's `tests/support/process.rs`).

#![allow(dead_code)]

/// The core's visible-skip helper (`SKIP <test>: <reason>`, or a failure where
/// `VDSOTIME_REQUIRE` names the requirement).
#[path = "../../../vdsotime/tests/support/skip.rs"]
pub mod skip;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

#[path = "../../../vdsotime-c/tests/support/compiler.rs"]
mod compiler;
pub use compiler::c_compiler;

/// The core's runner of test processes: a time limit that kills the whole process group.
#[allow(clippy::duplicate_mod)] // preload_random.rs has the core's getrandom_common too
#[path = "../../../vdsotime/tests/support/process.rs"]
pub mod process;

#[path = "../../../vdsotime-c/tests/support/program.rs"]
mod program;
pub use program::{run, Run};

/// target/<profile>/deps, the directory of the test executable, where `cargo test` builds the
/// library (it does not copy it up to target/<profile>, which may hold an older build).
pub fn build_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent()
        .expect("target/<profile>/deps/<test>")
        .to_path_buf()
}

/// The preload library cargo built for these tests (the crate's rlib type makes it build it).
pub fn preload() -> PathBuf {
    let path = build_dir().join("libvdsotime_preload.so");
    assert!(
        path.is_file(),
        "{} not found (cargo builds it with the tests)",
        path.display()
    );
    path
}

/// A fresh scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let profile = build_dir()
        .parent()
        .expect("deps has a parent")
        .to_path_buf();
    let dir = profile.join("vdsotime-preload-tests").join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Compiles C `sources` into `output`.
pub fn cc(sources: &[PathBuf], output: &Path, flags: &[&str]) {
    let out = process::output(
        c_compiler()
            .args(["-std=gnu11", "-O2", "-g", "-Wall", "-Wextra", "-Werror"])
            .args(sources)
            .arg("-o")
            .arg(output)
            .args(flags),
        Duration::from_secs(300),
    );
    assert!(
        out.status.success(),
        "cc failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `program args` plainly and succeeds, returning stdout.
pub fn run_plain(dir: &Path, program: &str, args: &[&str]) -> String {
    let r = run(
        Command::new(program).args(args).env_remove("LD_PRELOAD"),
        dir,
        Duration::from_secs(60),
    );
    assert!(
        r.status.success(),
        "{program} {args:?}: {}\n{}",
        r.status,
        r.stderr
    );
    r.stdout
}

/// Runs `program args` under the preload (plus `env`), which must succeed.
pub fn run_preloaded(dir: &Path, program: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(program);
    cmd.args(args).env("LD_PRELOAD", preload());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let r = run(&mut cmd, dir, Duration::from_secs(60));
    assert!(
        r.status.success(),
        "{program} {args:?} under the preload: {}\n{}",
        r.status,
        r.stderr
    );
    r
}
