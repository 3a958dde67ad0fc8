//! Starting a process from a test so that no test can hang on it.
//!
//! The child runs in a process group of its own; its standard output and error go to
//! unlinked temporary files, not pipes, so nothing the child leaves behind can keep the
//! test waiting for an end of file. At its time limit the whole group is killed (the
//! child, its forked copies and whatever they started), and the test fails with the
//! phase the child was in (its last `PHASE` line, see [`phase`]), the state of every
//! thread of the group at the kill, and the output so far. A child that exits normally
//! has its group killed too, so no leftover process outlives the test.
//!
//! Shared by every test of the workspace that starts a process (through `#[path]` in the
//! other crates); `cargo xtask cross` and `cargo xtask kernels` run tests with their own
//! outer limits.

#![allow(dead_code)]

use std::fmt;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The prefix of the lines that name the phase a child is in.
pub const PHASE: &str = "PHASE ";

/// Announces that this process enters phase `name`: a hang report names the last phase
/// announced. One `write(2)` straight to file descriptor 1, so it reaches the output even
/// where the test harness captures `println!`, and is safe in a forked child.
pub fn phase(name: &str) {
    let line = format!("{PHASE}{name}\n");
    // SAFETY: writes `line.len()` bytes of the live buffer `line` to descriptor 1.
    let _ = unsafe { libc::write(1, line.as_ptr().cast(), line.len()) };
}

/// A child that did not finish in time, and what it had done by then.
#[derive(Debug)]
pub struct Hung {
    /// The program and its arguments.
    pub command: String,
    pub limit: Duration,
    /// Each process that was killed and each of its threads, with its state and the
    /// kernel function it waited in, as seen just before the kill.
    pub processes: Vec<String>,
    /// The output so far; `status` is the child's death by SIGKILL.
    pub output: Output,
}

impl Hung {
    /// The last phase the child (or a process it forked) announced with [`phase`] (the
    /// test harness may have begun the line with the test's name).
    pub fn phase(&self) -> Option<&str> {
        let stdout = std::str::from_utf8(&self.output.stdout).ok()?;
        stdout
            .lines()
            .rev()
            .find_map(|l| Some(l.split_once(PHASE)?.1))
    }
}

impl fmt::Display for Hung {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} did not finish within {:?}: killed with its process group; hung in phase {}",
            self.command,
            self.limit,
            self.phase()
                .map_or("(none announced)".into(), |p| format!("{p:?}"))
        )?;
        writeln!(f, "--- threads at the kill")?;
        for p in &self.processes {
            writeln!(f, "{p}")?;
        }
        writeln!(
            f,
            "--- stdout so far\n{}",
            String::from_utf8_lossy(&self.output.stdout)
        )?;
        write!(
            f,
            "--- stderr so far\n{}",
            String::from_utf8_lossy(&self.output.stderr)
        )
    }
}

/// Why [`run`] has no output to give.
#[derive(Debug)]
pub enum Error {
    /// The program could not be started (for example, it is not installed).
    Spawn(io::Error),
    Hung(Box<Hung>),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Spawn(e) => write!(f, "cannot start the program: {e}"),
            Error::Hung(h) => h.fmt(f),
        }
    }
}

/// Runs `cmd` (standard input empty) in a process group of its own and returns its
/// output, or kills the group after `limit`.
pub fn run(cmd: &mut Command, limit: Duration) -> Result<Output, Error> {
    let out = scratch_file().map_err(Error::Spawn)?;
    let err = scratch_file().map_err(Error::Spawn)?;
    run_to(cmd, limit, out, err)
}

/// [`run`] with the output in the given files (opened for reading and writing), for a
/// test that keeps them.
pub fn run_to(cmd: &mut Command, limit: Duration, out: File, err: File) -> Result<Output, Error> {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(out.try_clone().map_err(Error::Spawn)?)
        .stderr(err.try_clone().map_err(Error::Spawn)?)
        .process_group(0)
        .spawn()
        .map_err(Error::Spawn)?;
    let pid = libc::pid_t::try_from(child.id()).expect("a pid fits pid_t");
    let ended = wait_or_kill(pid, -pid, limit);
    let output = |status| Output {
        status,
        stdout: contents(&out),
        stderr: contents(&err),
    };
    match ended {
        Ok(status) => Ok(output(status)),
        Err(processes) => Err(Error::Hung(Box::new(Hung {
            command: describe(cmd),
            limit,
            processes,
            output: output(ExitStatus::from_raw(libc::SIGKILL)),
        }))),
    }
}

/// [`run`], panicking with the report if the program cannot start or hangs.
pub fn output(cmd: &mut Command, limit: Duration) -> Output {
    match run(cmd, limit) {
        Ok(out) => out,
        Err(Error::Spawn(e)) => panic!("cannot start {}: {e}", describe(cmd)),
        Err(hung) => panic!("{hung}"),
    }
}

/// Waits up to `limit` for `pid`, a child of this process, then sends SIGKILL to
/// `target`: its process group (`-pid`) or the pid itself. The group is killed also
/// after a normal exit, before the child is reaped (its zombie keeps the group's id from
/// being reused), so nothing it left behind survives. Returns the exit status, or after a
/// timeout the threads that were killed.
pub fn wait_or_kill(
    pid: libc::pid_t,
    target: libc::pid_t,
    limit: Duration,
) -> Result<ExitStatus, Vec<String>> {
    let start = Instant::now();
    let mut nap = Duration::from_micros(100);
    let mut report = None;
    while !exited(pid) {
        if start.elapsed() >= limit {
            report = Some(threads_of(target));
            break;
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(20));
    }
    if target < 0 || report.is_some() {
        // SAFETY: kill takes no pointers; `target` is this function's own child or its
        // group, which the child's unreaped zombie keeps from being reused.
        unsafe { libc::kill(target, libc::SIGKILL) };
    }
    let status = reap(pid);
    report.map_or(Ok(status), Err)
}

/// Whether child `pid` has ended, without reaping it.
fn exited(pid: libc::pid_t) -> bool {
    loop {
        // SAFETY: an all-zero siginfo_t is valid; waitid writes only into it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid writes only into the valid `info`; WNOWAIT leaves the child
        // unreaped and WNOHANG makes it return at once.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if r == 0 {
            // SAFETY: waitid filled the fields of a child-state siginfo (si_pid 0: none).
            return unsafe { info.si_pid() } != 0;
        }
        let e = io::Error::last_os_error();
        assert_eq!(e.kind(), io::ErrorKind::Interrupted, "waitid({pid}): {e}");
    }
}

/// Reaps child `pid`.
fn reap(pid: libc::pid_t) -> ExitStatus {
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes only into the valid `status`.
        if unsafe { libc::waitpid(pid, &mut status, 0) } == pid {
            return ExitStatus::from_raw(status);
        }
        let e = io::Error::last_os_error();
        assert_eq!(e.kind(), io::ErrorKind::Interrupted, "waitpid({pid}): {e}");
    }
}

/// One line per thread of process `target` (or of every process of group `-target`):
/// pid, command line, thread id, state and the kernel function it waits in.
fn threads_of(target: libc::pid_t) -> Vec<String> {
    let read = |path: String| std::fs::read_to_string(path).unwrap_or_default();
    let pids: Vec<String> = if target > 0 {
        vec![target.to_string()]
    } else {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return vec!["(no /proc to list the group's processes)".into()];
        };
        dir.filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|pid| {
                // Fields after the command name's closing parenthesis: state ppid pgrp ...
                let stat = read(format!("/proc/{pid}/stat"));
                let fields = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
                fields.split_whitespace().nth(2) == Some(&(-target).to_string())
            })
            .collect()
    };
    let mut lines = Vec::new();
    for pid in pids {
        let cmdline = read(format!("/proc/{pid}/cmdline")).replace('\0', " ");
        lines.push(format!("process {pid}: {}", cmdline.trim_end()));
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for tid in tasks.filter_map(|e| e.ok()?.file_name().into_string().ok()) {
            let stat = read(format!("/proc/{pid}/task/{tid}/stat"));
            let state = stat
                .rsplit_once(')')
                .map_or("?", |(_, rest)| rest.trim_start());
            let wchan = read(format!("/proc/{pid}/task/{tid}/wchan"));
            lines.push(format!(
                "  thread {tid}: state {} in {}",
                state.split(' ').next().unwrap_or("?"),
                if wchan.is_empty() { "-" } else { &wchan }
            ));
        }
    }
    lines
}

/// A new temporary file, already unlinked: it disappears with its last descriptor. The
/// name holds the address of this file's counter, as a test binary that includes this
/// file twice (through two support modules) has two counters; a name still taken (a file
/// left by a killed process of the same id) is skipped for the next.
pub fn scratch_file() -> io::Result<File> {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let mut tries = 0;
    loop {
        let path = std::env::temp_dir().join(format!(
            "vdsotime-test-output-{}-{:x}-{}",
            std::process::id(),
            std::ptr::addr_of!(COUNT) as usize,
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        let opened = File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path);
        match opened {
            Ok(file) => {
                std::fs::remove_file(&path)?;
                return Ok(file);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && tries < 1000 => tries += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Everything written to `file` so far, read from its start (whatever its offset).
pub fn contents(file: &File) -> Vec<u8> {
    let len = file.metadata().map_or(0, |m| m.len());
    let mut buf = vec![0; usize::try_from(len).unwrap_or(0)];
    let n = read_at_most(file, &mut buf);
    buf.truncate(n);
    buf
}

/// Fills `buf` from offset 0 of `file` up to its end; the number of bytes read.
fn read_at_most(file: &File, buf: &mut [u8]) -> usize {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    done
}

/// The program and arguments of `cmd`, for messages.
fn describe(cmd: &Command) -> String {
    let mut words = vec![cmd.get_program().to_string_lossy().into_owned()];
    words.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
    words.join(" ")
}
