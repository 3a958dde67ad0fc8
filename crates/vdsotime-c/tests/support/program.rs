//! Running a program to its end with a deadline, its output in files: shared by the C
//! library's and the preload's tests. The program runs in a process group of its own (the
//! core's runner, `super::process`), and a timeout kills the whole group and fails the test
//! with the output so far.

use std::fs;
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::time::Duration;

use super::process;

/// What a finished program did.
#[derive(Debug)]
pub struct Run {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd` with its output in files under `dir` (no pipe to fill up, none a grandchild
/// can hold open), killing its process group after `limit`.
pub fn run(cmd: &mut Command, dir: &Path, limit: Duration) -> Run {
    let file = |name| {
        fs::File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(dir.join(name))
            .unwrap_or_else(|e| panic!("{name} file in {}: {e}", dir.display()))
    };
    let out = process::run_to(cmd, limit, file("stdout"), file("stderr"))
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    Run {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
