//! vdsotime-c's tests/c/api_test.c built with -DLIBC_NAMES, so that it calls clock_gettime,
//! clock_getres, gettimeofday, time, getcpu and sched_getcpu by their libc names, run under
//! the preload: each name bound to the preload, and each against the raw system calls.

mod support;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use support::{cc, preload, run, scratch};

#[test]
fn libc_names_under_the_preload_match_the_kernel() {
    check_under_preload("api", &[]);
}

/// 32-bit glibc with a 64-bit time_t calls __clock_gettime64, __gettimeofday64, __time64...
#[cfg(target_pointer_width = "32")]
#[test]
fn time64_names_under_the_preload_match_the_kernel() {
    check_under_preload("api-time64", &["-D_FILE_OFFSET_BITS=64", "-D_TIME_BITS=64"]);
}

fn check_under_preload(name: &str, extra: &[&str]) {
    let dir = scratch(name);
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../vdsotime-c/tests/c/api_test.c");
    let exe = dir.join("api_test_libc");
    let mut flags = vec!["-DLIBC_NAMES", "-ldl"];
    flags.extend_from_slice(extra);
    cc(&[source], &exe, &flags);
    // With glibc's rseq area (sched_getcpu reads it) and without (sched_getcpu uses the vDSO).
    for tunables in ["", "glibc.pthread.rseq=0"] {
        let r = run(
            Command::new(&exe)
                .env("LD_PRELOAD", preload())
                .env("GLIBC_TUNABLES", tunables),
            &dir,
            Duration::from_secs(120),
        );
        assert!(
            r.status.success(),
            "GLIBC_TUNABLES={tunables}: {}\n{}{}",
            r.status,
            r.stdout,
            r.stderr
        );
        assert!(r.stdout.contains(", 0 failed"), "{}", r.stdout);
        println!("GLIBC_TUNABLES={tunables}: {}", r.stdout);
    }
}
