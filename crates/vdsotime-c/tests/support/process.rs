//! Running a program to its end with a deadline, its output in files: shared by the C
//! library's and the preload's tests.

use std::fs::{self, File};
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

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
