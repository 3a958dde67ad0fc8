//! tests/c/random_test.c against libvdsotime, installed by install.sh and linked through its
//! pkg-config files: vdsotime_getrandom and vdsotime_getentropy against the kernel's system
//! call and glibc's getentropy; and, counted by strace, no getrandom system call over 100,000
//! calls of 16 bytes once the thread has its vDSO state.

mod support;

#[path = "../../vdsotime/tests/getrandom_common/mod.rs"]
mod getrandom_common;

use std::process::Command;

use getrandom_common::{log_path, sections, skip, strace_args, strace_unusable, warm_up_draws};
use support::{archive_link_extra, cc, crate_dir, install, pkg_config, run_ok, scratch};

/// Builds random_test.c against the installed library (`package`: vdsotime or
/// vdsotime-static) and returns the executable and the library directory.
fn build(name: &str, package: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = scratch(name);
    let prefix = dir.join("prefix");
    install(&prefix);
    let exe = dir.join("random_test");
    let mut flags = pkg_config(&prefix, package);
    if package == "vdsotime-static" {
        flags.extend(archive_link_extra());
    }
    cc(&[crate_dir().join("tests/c/random_test.c")], &exe, &flags);
    (exe, prefix.join("lib"))
}

fn check(name: &str, package: &str) {
    let (exe, lib) = build(name, package);
    let out = run_ok(Command::new(&exe).env("LD_LIBRARY_PATH", lib));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(", 0 failed"), "{stdout}");
    println!("{stdout}");
}

#[test]
fn shared_library_getrandom_matches_the_kernel() {
    check("random-shared", "vdsotime");
}

#[test]
fn static_library_getrandom_matches_the_kernel() {
    check("random-static", "vdsotime-static");
}

#[test]
fn a_c_program_makes_no_getrandom_syscall_after_warm_up() {
    const TEST: &str = "a_c_program_makes_no_getrandom_syscall_after_warm_up";
    const CALLS: usize = 100_000;
    if let Some(why) = strace_unusable() {
        return skip(TEST, "strace", why);
    }
    let (exe, lib) = build("random-strace", "vdsotime");
    let log = log_path("c-program");
    let args = strace_args(&log);
    run_ok(
        Command::new(&args[0])
            .args(&args[1..])
            .arg(&exe)
            .args(["count", &CALLS.to_string(), &warm_up_draws().to_string()])
            .env("LD_LIBRARY_PATH", lib),
    );
    let counts = sections(&log);
    let _ = std::fs::remove_file(&log);
    assert_eq!(counts.len(), 3, "markers missing: {counts:?}");
    let expected = if vdsotime::random::params().is_some() {
        0
    } else {
        CALLS
    };
    println!(
        "vdsotime_getrandom: {} getrandom syscalls for {CALLS} calls",
        counts[1]
    );
    assert_eq!(counts[1], expected);
}
