//! `vdsotime top` inside a PID namespace of its own (`unshare --pid --fork --mount-proc`,
//! as a container runs it): the rows show the namespace's PIDs, `--pid` takes them, and
//! the processes outside it are one row, with each backend.

use std::process::Command;

use serde_json::Value;

use crate::parts;
use crate::skip::skip;
use crate::top::{build_loop, start, traceable};

/// The line that separates the two documents the namespace's shell prints.
const BETWEEN: &str = "----";

#[test]
fn inside_a_pid_namespace_rows_and_pid_use_its_numbers() {
    const TEST: &str = "top_namespace::inside_a_pid_namespace_rows_and_pid_use_its_numbers";
    let dir = crate::scratch("top-pidns");
    if !traceable(TEST) {
        return;
    }
    let Some(exe) = build_loop(TEST, &dir) else {
        return;
    };
    // Outside the namespace: calls whose process has no number inside it.
    let _outside = start(Command::new(&exe).args(["syscall", "2000", "60"]));
    for backend in ["tracepoint", "perf"] {
        in_a_namespace(TEST, &exe, backend);
    }
}

/// `top --backend BACKEND` run twice in a PID namespace of its own, beside a loop of that
/// namespace: every process, then `--pid` of the loop.
fn in_a_namespace(test: &str, exe: &std::path::Path, backend: &str) {
    let top = env!("CARGO_BIN_EXE_vdsotime");
    let script = format!(
        "'{exe}' syscall 500 30 & sleep 0.3; echo $!; \
         '{top}' top --once --duration 1 --json --backend {backend}; echo {BETWEEN}; \
         '{top}' top --once --duration 1 --json --backend {backend} --pid $!; kill $!",
        exe = exe.display()
    );
    let mut cmd = Command::new("unshare");
    cmd.args(["--pid", "--fork", "--mount-proc", "sh", "-c", &script]);
    let (c, out, err) = parts(&crate::process::output(&mut cmd, crate::LIMIT));
    if c != 0 && out.is_empty() {
        return skip(test, "pidns", format!("unshare --pid failed ({c}): {err}"));
    }
    let (pid, docs) = out
        .split_once('\n')
        .expect("the loop's pid, then the documents");
    let pid: u64 = pid.trim().parse().expect("the loop's pid in the namespace");
    let (all, only) = docs.split_once(BETWEEN).expect("two documents");
    let all: Value = serde_json::from_str(all).unwrap_or_else(|e| panic!("{e}: {all} {err}"));
    let only: Value = serde_json::from_str(only).unwrap_or_else(|e| panic!("{e}: {only} {err}"));
    assert_eq!(all["backend"], backend, "{all:#}");
    assert_eq!(only["backend"], backend, "{only:#}");
    let rows = |doc: &Value, pid: u64| -> Vec<Value> {
        doc["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["pid"].as_u64() == Some(pid))
            .cloned()
            .collect()
    };
    // The loop, by its number in the namespace, in both documents.
    let mine = rows(&all, pid);
    assert!(
        mine.iter().any(|r| r["comm"] == "top_loop"),
        "{backend}: pid {pid} in: {all:#}"
    );
    let watched = rows(&only, pid);
    assert_eq!(watched.len(), 1, "{backend}: --pid {pid}: {only:#}");
    assert!(
        watched[0]["calls"].as_u64().unwrap() >= 250,
        "{backend}: {only:#}"
    );
    // Every process outside: pid 0, named as such.
    let outside = rows(&all, 0);
    assert!(!outside.is_empty(), "{backend}: {all:#}");
    assert!(
        outside
            .iter()
            .all(|r| r["comm"] == "(outside this PID namespace)"),
        "{backend}: {all:#}"
    );
}
