//! Shared by the preload tests: where cargo put libvdsotime_preload.so, compiling C programs
//! with the machine's `cc`, and running programs with and without the preload, with a timeout.

#![allow(dead_code)]

/// The core's visible-skip helper (`SKIP <test>: <reason>`, or a failure where
/// `VDSOTIME_REQUIRE` names the requirement).
#[path = "../../../vdsotime/tests/support/skip.rs"]
pub mod skip;

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

#[path = "../../../vdsotime-c/tests/support/compiler.rs"]
mod compiler;
pub use compiler::c_compiler;

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
    let out = c_compiler()
        .args(["-std=gnu11", "-O2", "-g", "-Wall", "-Wextra", "-Werror"])
        .args(sources)
        .arg("-o")
        .arg(output)
        .args(flags)
        .output()
        .expect("run cc");
    assert!(
        out.status.success(),
        "cc failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What a finished program did.
#[derive(Debug)]
pub struct Run {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd` with its output in files under `dir` (no pipe to fill up), killing it after
/// `limit`; a timeout fails the test.
pub fn run(cmd: &mut Command, dir: &Path, limit: Duration) -> Run {
    let (out_path, err_path) = (dir.join("stdout"), dir.join("stderr"));
    cmd.stdout(File::create(&out_path).expect("stdout file"))
        .stderr(File::create(&err_path).expect("stderr file"))
        .stdin(std::process::Stdio::null());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{cmd:?} did not finish within {limit:?} (deadlock?)\n--- stderr\n{}",
                fs::read_to_string(&err_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Run {
        status,
        stdout: fs::read_to_string(&out_path).unwrap_or_default(),
        stderr: String::from_utf8_lossy(&fs::read(&err_path).unwrap_or_default()).into_owned(),
    }
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
