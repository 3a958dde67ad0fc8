//! A 32-bit (i386) process on x86_64 enters the kernel in i386 numbering, where 13 is
//! `time` and 78 `gettimeofday` (natively rt_sigaction and getdents): `vdsotime top` must
//! count its calls as what they are. fentry knows the table from the kernel function
//! entered (`__ia32_sys_...`); the tracepoint reads the number with the ABI of the
//! process's executable.

use std::process::{Command, Stdio};

use serde_json::Value;

use crate::scratch;
use crate::skip::skip;
use crate::top::{finish, make_calls, rows_of, traceable, wait_until_ready, Running};
use crate::top_backends::fentry_opens;

/// The calls of each kind tests/cli/top_i386.c makes.
const CALLS: u64 = 1000;

/// tests/cli/top_i386.c built freestanding for i386, or `None` after a SKIP.
fn build_i386(test: &str) -> Option<std::path::PathBuf> {
    if cfg!(not(target_arch = "x86_64")) {
        skip(test, "i386-cc", "i386 processes run on x86_64 only");
        return None;
    }
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cli/top_i386.c");
    let exe = scratch("top-i386").join("top_i386");
    let built = Command::new("cc")
        .args(["-m32", "-nostdlib", "-static", "-ffreestanding", "-fno-pic"])
        .args(["-fno-stack-protector", "-O2", "-o"])
        .arg(&exe)
        .arg(src)
        .output();
    match built {
        Ok(o) if o.status.success() => Some(exe),
        other => {
            skip(
                test,
                "i386-cc",
                format!("cc -m32 -nostdlib failed: {other:?}"),
            );
            None
        }
    }
}

/// `top --backend backend --pid` of the i386 program while it makes its calls: the
/// document, and the program's pid.
fn watch_i386(exe: &std::path::Path, backend: &str) -> (Value, u32) {
    let mut program = Running(
        Command::new(exe)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the i386 program"),
    );
    let pid = program.pid();
    let mut top = Running(
        Command::new(env!("CARGO_BIN_EXE_vdsotime"))
            .args(["top", "--once", "--duration", "2", "--json"])
            .args(["--backend", backend, "--pid", &pid.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start top"),
    );
    wait_until_ready(&mut top, backend);
    let stdin = make_calls(&mut program, "the i386 program");
    // It stays until top is done, so that top can read what it runs.
    let (out, err) = finish(&mut top);
    assert!(top.0.wait().expect("top's exit").success(), "{err}");
    drop(stdin);
    let status = program.0.wait().expect("the program's exit");
    assert!(status.success(), "the i386 program exited {status}");
    let doc = serde_json::from_str(&out).unwrap_or_else(|e| panic!("bad JSON ({e}): {out}"));
    (doc, pid)
}

/// Each BPF backend counts an i386 process's calls under i386 numbering: exactly
/// [`CALLS`] of clock_gettime, clock_gettime64, time and gettimeofday, nothing else.
#[test]
fn a_32_bit_process_is_counted_in_its_own_numbering() {
    const TEST: &str = "top_i386::a_32_bit_process_is_counted_in_its_own_numbering";
    if !traceable(TEST) {
        return;
    }
    let Some(exe) = build_i386(TEST) else {
        return;
    };
    let fentry = fentry_opens(TEST);
    for backend in ["fentry", "tracepoint"] {
        if backend == "fentry" && !fentry {
            continue;
        }
        let (doc, pid) = watch_i386(&exe, backend);
        assert_eq!(doc["backend"], backend, "{doc:#}");
        let mut seen: Vec<(String, String, u64)> = rows_of(&doc, pid)
            .iter()
            .map(|r| {
                let clock = r["clock"].as_str().unwrap_or("-").to_string();
                (
                    r["syscall"].as_str().unwrap_or("?").to_string(),
                    clock,
                    r["calls"].as_u64().unwrap_or(0),
                )
            })
            .collect();
        seen.sort();
        let want = [
            ("clock_gettime", "CLOCK_MONOTONIC"),
            ("clock_gettime64", "CLOCK_MONOTONIC"),
            ("gettimeofday", "-"),
            ("time", "-"),
        ]
        .map(|(s, c)| (s.to_string(), c.to_string(), CALLS));
        assert_eq!(seen, want, "{backend}: {doc:#}");
        assert_eq!(doc["lost_samples"], 0, "{doc:#}");
        eprintln!("{TEST}: {backend}: {CALLS} of each i386 call counted as itself");
    }
}
