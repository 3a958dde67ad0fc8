//! Running the plan: each program in a process group of its own, its output in a file on
//! /tmp, killed with its group at the timeout, and whatever it left running killed after it;
//! then the lines the host needs.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::plan::{Mode, Step};
use crate::report;

/// Lines of a failed program's output shown on the console.
const TAIL: usize = 80;

/// Runs every step in order.
pub fn all(steps: &[Step]) {
    let mut env: Vec<(String, String)> = Vec::new();
    // Each label's output of its last run, for `expect`.
    let mut outputs: Vec<(String, Vec<String>)> = Vec::new();
    for (n, step) in steps.iter().enumerate() {
        match step {
            Step::Env { key, value } => env.push((key.clone(), value.clone())),
            Step::Run {
                label,
                timeout,
                mode,
                argv,
            } => {
                let lines = program(n, label, *timeout, *mode, argv, &env);
                outputs.retain(|(l, _)| l != label);
                outputs.push((label.clone(), lines));
                end_leftovers();
            }
            Step::Hex { label, path } => match std::fs::read(path) {
                Ok(bytes) => report::hex(label, &bytes),
                Err(e) => report::line(&format!("error hex {label}: {path}: {e}")),
            },
            Step::Expect { label, text } => {
                if !said(&outputs, label, text) {
                    report::line(&format!("error expect {label}: no line says {text:?}"));
                }
            }
        }
        reap_orphans();
    }
}

/// How a program ended.
enum End {
    Exited(ExitStatus),
    TimedOut,
}

fn program(
    n: usize,
    label: &str,
    timeout: Duration,
    mode: Mode,
    argv: &[String],
    env: &[(String, String)],
) -> Vec<String> {
    report::line(&format!("start {label}"));
    let out_path = format!("/tmp/vm-init-{n}.out");
    let start = Instant::now();
    let end = spawn_and_wait(&out_path, timeout, argv, env);
    let elapsed = start.elapsed().as_millis();
    let (verdict, status, failed) = match &end {
        Ok(End::Exited(s)) if s.success() => ("PASS", s.to_string(), false),
        Ok(End::Exited(s)) => ("FAIL", s.to_string(), true),
        Ok(End::TimedOut) => (
            "TIMEOUT",
            format!("killed after {} s", timeout.as_secs()),
            true,
        ),
        Err(e) => ("FAIL", e.clone(), true),
    };
    let lines: Vec<String> = File::open(&out_path)
        .map(|f| BufReader::new(f).lines().map_while(Result::ok).collect())
        .unwrap_or_default();
    let shown: Vec<&String> = match mode {
        Mode::Show => lines.iter().collect(),
        Mode::Tests if failed => lines[lines.len().saturating_sub(TAIL)..].iter().collect(),
        Mode::Tests => lines.iter().filter(|l| interesting(l)).collect(),
    };
    for l in shown {
        report::line(&format!("out {label} | {l}"));
    }
    let _ = std::fs::remove_file(&out_path);
    report::line(&format!(
        "end {label} {verdict} {} {elapsed}ms",
        status.replace(' ', "_")
    ));
    lines
}

/// A test's own SKIP report, or libtest's summary of a binary.
fn interesting(line: &str) -> bool {
    let l = line.trim_start();
    l.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("skip")) || l.starts_with("test result:")
}

fn spawn_and_wait(
    out_path: &str,
    timeout: Duration,
    argv: &[String],
    env: &[(String, String)],
) -> Result<End, String> {
    let out = File::create(out_path).map_err(|e| format!("{out_path}: {e}"))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let (program, args) = argv.split_first().ok_or("empty command")?;
    let mut child = Command::new(program)
        .args(args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir("/tmp")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("{program}: {e}"))?;
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return Ok(End::Exited(status));
        }
        if start.elapsed() > timeout {
            let group = libc::pid_t::try_from(child.id()).map_err(|e| e.to_string())?;
            // SAFETY: kill takes no pointers; the group is the one this function started.
            unsafe { libc::kill(-group, libc::SIGKILL) };
            let _ = child.wait();
            return Ok(End::TimedOut);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Ends whatever the program left running: tests start their children in process groups
/// of their own, which the timeout's kill of the program's group does not reach. As PID 1
/// this process is the only one `kill(-1)` spares.
fn end_leftovers() {
    // SAFETY: getpid and kill take no pointers.
    unsafe {
        if libc::getpid() == 1 {
            libc::kill(-1, libc::SIGKILL);
        }
    }
}

/// Whether a line of `label`'s last output contains `text` (false if it did not run).
fn said(outputs: &[(String, Vec<String>)], label: &str, text: &str) -> bool {
    outputs
        .iter()
        .find(|(l, _)| l == label)
        .is_some_and(|(_, lines)| lines.iter().any(|l| l.contains(text)))
}

/// As PID 1 this process inherits every orphan: reap those that have exited.
fn reap_orphans() {
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes only through the valid `status` pointer.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expect_looks_in_the_labels_last_output_only() {
        let outputs = vec![
            ("info".to_string(), vec!["AUX0 served".to_string()]),
            (
                "doctor".to_string(),
                vec!["healthy".into(), "ok AUX0".into()],
            ),
        ];
        assert!(said(&outputs, "doctor", "ok AUX0"));
        assert!(!said(&outputs, "doctor", "AUX0 served"));
        assert!(!said(&outputs, "bench", "healthy"));
    }
}
