//! getrandom and getentropy under the preload: vdsotime-c's tests/c/random_test.c, built
//! with -DLIBC_NAMES, checks both libc names against the kernel and that both are bound to
//! the preload; and strace counts the getrandom system calls of a C program and of an
//! unmodified Python (`os.urandom`, which calls libc's getrandom) between two marker
//! system calls: with the preload none once the thread has its vDSO state, without it one
//! per call.
//!
//! 64-bit targets only, like real_programs.rs: the machine's programs are 64-bit.
#![cfg(target_pointer_width = "64")]

mod support;

#[path = "../../vdsotime/tests/getrandom_common/mod.rs"]
mod getrandom_common;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use getrandom_common::{log_path, sections, skip, strace_args, strace_unusable, warm_up_draws};
use support::{cc, preload, run, scratch};

const CALLS: usize = 10_000;

fn random_test(dir: &std::path::Path) -> PathBuf {
    let source =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../vdsotime-c/tests/c/random_test.c");
    let exe = dir.join("random_test_libc");
    cc(&[source], &exe, &["-DLIBC_NAMES", "-ldl"]);
    exe
}

#[test]
fn libc_getrandom_and_getentropy_under_the_preload_match_the_kernel() {
    let dir = scratch("random-api");
    let exe = random_test(&dir);
    let r = run(
        Command::new(&exe).env("LD_PRELOAD", preload()),
        &dir,
        Duration::from_secs(120),
    );
    assert!(r.status.success(), "{}\n{}{}", r.status, r.stdout, r.stderr);
    assert!(r.stdout.contains(", 0 failed"), "{}", r.stdout);
    println!("{}", r.stdout);
}

/// getrandom system calls between the markers of `program args`, with or without the preload.
fn count(name: &str, program: &str, args: &[&str], preloaded: bool) -> usize {
    let dir = scratch(name);
    let log = log_path(name);
    let strace = strace_args(&log);
    let mut cmd = Command::new(&strace[0]);
    cmd.args(&strace[1..]).arg(program).args(args);
    if preloaded {
        cmd.env("LD_PRELOAD", preload());
    } else {
        cmd.env_remove("LD_PRELOAD");
    }
    let r = run(&mut cmd, &dir, Duration::from_secs(120));
    assert!(
        r.status.success(),
        "{program}: {}\n{}{}",
        r.status,
        r.stdout,
        r.stderr
    );
    let counts = sections(&log);
    let _ = std::fs::remove_file(&log);
    assert_eq!(counts.len(), 3, "{program}: markers missing: {counts:?}");
    counts[1]
}

fn check_counts(test: &str, program: &str, args: &[&str]) {
    if let Some(why) = strace_unusable() {
        return skip(test, "strace", why);
    }
    let with = count(&format!("{test}-with"), program, args, true);
    let without = count(&format!("{test}-without"), program, args, false);
    println!(
        "{program}: {CALLS} calls: {with} getrandom syscalls under the preload, {without} without"
    );
    assert!(
        without >= CALLS,
        "without the preload: {without} syscalls for {CALLS} calls"
    );
    let expected = if vdsotime::random::params().is_some() {
        0
    } else {
        CALLS
    };
    assert_eq!(with, expected, "under the preload");
}

#[test]
fn a_c_program_makes_no_getrandom_syscall_under_the_preload() {
    let exe = random_test(&scratch("random-count-build"));
    let (calls, warm) = (CALLS.to_string(), warm_up_draws().to_string());
    check_counts(
        "a_c_program_makes_no_getrandom_syscall_under_the_preload",
        exe.to_str().expect("UTF-8 path"),
        &["count", &calls, &warm],
    );
}

#[test]
fn python_os_urandom_makes_no_getrandom_syscall_under_the_preload() {
    let marker = "os.access('/vdsotime-getrandom-strace-marker', os.F_OK)";
    let script = format!(
        "import os\nfor _ in range({}):\n    os.urandom(16)\n{marker}\nfor _ in range({CALLS}):\n    os.urandom(16)\n{marker}",
        warm_up_draws()
    );
    check_counts(
        "python_os_urandom_makes_no_getrandom_syscall_under_the_preload",
        "python3",
        &["-c", &script],
    );
}
