//! `vdsotime top`'s reasons, each shown on a real process that has it: a CPU-time clock
//! read through glibc and by Python, a loop the vDSO serves (not listed), a program under
//! `strace -f` (flagged, keeping its reason), a static glibc program (judged by what it
//! contains), and a program's getrandom calls before and after the preload library.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::scratch;
use crate::skip::skip;
use crate::top::{build_loop, rows_of, start, top_json, traceable, watch_loop};

#[test]
fn a_glibc_cpu_time_loop_gets_the_cpu_time_reason() {
    const TEST: &str = "top_reasons::a_glibc_cpu_time_loop_gets_the_cpu_time_reason";
    let Some((_child, doc, rows)) = watch_loop(TEST, "cputime", "1000", "2") else {
        return;
    };
    assert_eq!(rows.len(), 1, "{doc:#}");
    assert_eq!(rows[0]["clock"], "CLOCK_PROCESS_CPUTIME_ID", "{}", rows[0]);
    assert_eq!(rows[0]["reason"], "cpu_time_clock", "{}", rows[0]);
    assert!(
        rows[0]["fix"].as_str().unwrap().contains("CPU-time clock"),
        "{}",
        rows[0]
    );
    // No vDSO path, so no waste against it; what the call costs, timed for its clock.
    assert_eq!(rows[0]["vdso_path"], false, "{}", rows[0]);
    assert!(rows[0]["wasted_cpu"].is_null(), "{}", rows[0]);
    assert!(
        rows[0]["syscall_ns"].as_f64().is_some_and(|ns| ns > 0.0),
        "{}",
        rows[0]
    );
}

#[test]
fn python_process_time_gets_the_cpu_time_reason() {
    const TEST: &str = "top_reasons::python_process_time_gets_the_cpu_time_reason";
    if !traceable(TEST) {
        return;
    }
    let code = "import time\nend = time.monotonic() + 60\nwhile time.monotonic() < end:\n    time.process_time()\n    time.sleep(0.001)\n";
    let child = start(Command::new("python3").args(["-c", code]));
    let doc = top_json("2", &["--pid", &child.pid().to_string()]);
    let rows = rows_of(&doc, child.pid());
    let cpu: Vec<_> = rows
        .iter()
        .filter(|r| r["clock"] == "CLOCK_PROCESS_CPUTIME_ID")
        .collect();
    assert_eq!(cpu.len(), 1, "{doc:#}");
    assert_eq!(cpu[0]["reason"], "cpu_time_clock", "{}", cpu[0]);
    assert!(cpu[0]["per_second"].as_f64().unwrap() > 100.0, "{}", cpu[0]);
}

#[test]
fn a_loop_the_vdso_serves_is_not_listed() {
    const TEST: &str = "top_reasons::a_loop_the_vdso_serves_is_not_listed";
    let Some((_child, _doc, rows)) = watch_loop(TEST, "vdso", "2000", "2") else {
        return;
    };
    // Only where the clocksource cannot be read in user space does the kernel see them,
    // and then with that reason.
    for r in rows {
        assert_eq!(
            r["reason"], "clocksource",
            "a vDSO call reached the kernel: {r}"
        );
    }
}

#[test]
fn a_program_under_strace_is_flagged_and_keeps_its_reason() {
    const TEST: &str = "top_reasons::a_program_under_strace_is_flagged_and_keeps_its_reason";
    let dir = scratch("top-strace");
    if !traceable(TEST) {
        return;
    }
    let Some(exe) = build_loop(TEST, &dir) else {
        return;
    };
    let strace = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=none", "-o", "/dev/null"])
        .arg(&exe)
        .args(["syscall", "500", "60"])
        .spawn();
    let strace = match strace {
        Ok(c) => crate::top::Running(c),
        Err(e) => return skip(TEST, "strace", format!("no strace: {e}")),
    };
    std::thread::sleep(Duration::from_millis(500));
    // The traced program is strace's child.
    let children = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", strace.pid()))
        .unwrap_or_default();
    let pid: u32 = children
        .split_whitespace()
        .next()
        .and_then(|p| p.parse().ok())
        .expect("strace's child");
    let doc = top_json("2", &["--pid", &pid.to_string()]);
    let rows = rows_of(&doc, pid);
    assert_eq!(rows.len(), 1, "{doc:#}");
    // Traced is a flag: the row keeps its real cause, a direct system call here (or
    // the clocksource, where the doctor proved the vDSO cannot read it).
    assert!(
        rows[0]["traced"]
            .as_str()
            .is_some_and(|t| t.starts_with("strace (pid ")),
        "{}",
        rows[0]
    );
    assert!(
        ["direct_syscall", "clocksource"].contains(&rows[0]["reason"].as_str().unwrap()),
        "{}",
        rows[0]
    );
}

/// libvdsotime_preload.so: where `cargo test --workspace` built it, else built now into
/// a target directory of its own (the outer cargo may hold the main one's lock).
fn preload() -> Result<PathBuf, String> {
    let deps = std::env::current_exe().map_err(|e| e.to_string())?;
    let deps = deps.parent().ok_or("no deps directory")?;
    let built = deps.join("libvdsotime_preload.so");
    if built.is_file() {
        return Ok(built);
    }
    let target = deps
        .parent()
        .and_then(|p| p.parent())
        .ok_or("no target dir")?
        .join("top-preload");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let o = Command::new(cargo)
        .args(["build", "-q", "-p", "vdsotime-preload", "--target-dir"])
        .arg(&target)
        .output()
        .map_err(|e| e.to_string())?;
    if !o.status.success() {
        return Err(String::from_utf8_lossy(&o.stderr).into_owned());
    }
    Ok(target.join("debug/libvdsotime_preload.so"))
}

/// getrandom rows of Python reading os.urandom, with `env`.
fn urandom_rows(env: &[(&str, &str)]) -> Vec<serde_json::Value> {
    let code = "import os, time\nend = time.monotonic() + 60\nwhile time.monotonic() < end:\n    os.urandom(16)\n    time.sleep(0.001)\n";
    let mut cmd = Command::new("python3");
    cmd.args(["-c", code]).envs(env.iter().copied());
    let child = start(&mut cmd);
    std::thread::sleep(Duration::from_millis(300));
    let doc = top_json("2", &["--pid", &child.pid().to_string()]);
    rows_of(&doc, child.pid())
        .into_iter()
        .filter(|r| r["syscall"] == "getrandom")
        .collect()
}

#[test]
fn the_preload_library_takes_a_programs_getrandom_calls_off_the_kernel() {
    const TEST: &str =
        "top_reasons::the_preload_library_takes_a_programs_getrandom_calls_off_the_kernel";
    if !traceable(TEST) {
        return;
    }
    let before = urandom_rows(&[]);
    if before.is_empty() {
        return skip(
            TEST,
            "libc-getrandom-syscall",
            "this C library's getrandom() already uses the vDSO: nothing for the preload to take over",
        );
    }
    assert!(
        before[0]["per_second"].as_f64().unwrap() > 100.0,
        "{before:?}"
    );
    assert_eq!(before[0]["reason"], "getrandom_no_vdso", "{before:?}");
    let lib = preload().unwrap_or_else(|e| panic!("building the preload library: {e}"));
    let after = urandom_rows(&[("LD_PRELOAD", lib.to_str().unwrap())]);
    // The vDSO's getrandom may itself fall back to the system call now and then (its
    // state being set up, a reseed): at most 1% of the calls before may remain.
    let rate = |rows: &[serde_json::Value]| -> f64 {
        rows.iter().map(|r| r["per_second"].as_f64().unwrap()).sum()
    };
    assert!(
        rate(&after) <= rate(&before) / 100.0,
        "with {}: {after:?}\nbefore: {before:?}",
        lib.display()
    );
}

/// A static glibc program uses the vDSO (its C library looks `__vdso_clock_gettime` up):
/// its direct system calls are its own, not its static linking's.
#[test]
fn a_static_glibc_program_is_judged_by_its_contents() {
    const TEST: &str = "top_reasons::a_static_glibc_program_is_judged_by_its_contents";
    let dir = scratch("top-static");
    if !traceable(TEST) {
        return;
    }
    let Some(exe) = crate::top::build_c_with(TEST, &dir, "top_loop", &["-static"]) else {
        return;
    };
    let child = crate::top::start(Command::new(&exe).args(["syscall", "500", "60"]));
    std::thread::sleep(Duration::from_millis(200));
    let doc = top_json("1", &["--pid", &child.pid().to_string()]);
    let rows = rows_of(&doc, child.pid());
    assert_eq!(rows.len(), 1, "{doc:#}");
    assert!(
        ["direct_syscall", "clocksource"].contains(&rows[0]["reason"].as_str().unwrap()),
        "{}",
        rows[0]
    );
}
