//! How many getrandom system calls `vdsotime::getrandom` really makes, counted by
//! `strace` in a child process (the kernel's `vdso_test_getrandom` checks the same):
//! a thread's first `SYSCALL_DRAWS` draws are system calls and map nothing (a
//! short-lived process costs what the system call costs); the next takes a state (one
//! page, one system call for its key); then none over 100,000 calls of 16 bytes, also
//! inside a time namespace (whose vDSO data pages are laid out differently); exactly
//! one per call for the flags the vDSO must not answer (an unknown bit,
//! `GRND_INSECURE | GRND_RANDOM`); exactly one per call everywhere where the vDSO has
//! no getrandom (and without `std`); and a process's first draw of more than 256 bytes,
//! which the system call could cut short on a signal, takes a state at once.

mod getrandom_common;
mod reliability_common;

use std::time::Duration;

use getrandom_common::{
    log_path, marker, sections, sections_of, skip, strace_args, strace_unusable,
};
use reliability_common::{child_mode, expect_no_vdso, process, run_child};
use vdsotime::random::SYSCALL_DRAWS;
use vdsotime::{Function, GrndFlags, Path};

const TEST: &str = "getrandom_syscalls_counted_by_strace";
const TIMENS_TEST: &str = "getrandom_syscalls_counted_by_strace_in_a_time_namespace";
const CALLS: usize = 100_000;
/// Under valgrind (no vDSO: one system call per call, each far dearer there than natively).
const CALLS_NO_VDSO: usize = 1_000;

fn calls() -> usize {
    if expect_no_vdso() {
        CALLS_NO_VDSO
    } else {
        CALLS
    }
}
const REFUSED_CALLS: usize = 100;

/// The child: each section between markers: the first draws, the one that takes a
/// state, the steady state, the refused flags.
fn child() {
    let mut buf = [0u8; 16];
    let path = vdsotime::path(Function::Getrandom);
    println!(); // the harness's "test ... " has no newline
    println!("PATH {path}");
    println!("VDSO {}", matches!(path, Path::Vdso { .. }));
    marker();
    for _ in 0..SYSCALL_DRAWS {
        vdsotime::getrandom(&mut buf, GrndFlags::NONE).expect("a first draw");
    }
    marker();
    vdsotime::getrandom(&mut buf, GrndFlags::NONE).expect("the draw that takes a state");
    marker();
    for _ in 0..calls() {
        let n = vdsotime::getrandom(std::hint::black_box(&mut buf), GrndFlags::NONE);
        assert_eq!(n, Ok(16));
    }
    marker();
    for flags in [
        GrndFlags::from_raw(8),
        GrndFlags::INSECURE | GrndFlags::RANDOM,
    ] {
        for _ in 0..REFUSED_CALLS / 2 {
            let r = vdsotime::getrandom(&mut buf, flags);
            assert_eq!(r, Err(vdsotime::Errno::EINVAL), "{flags:?}");
        }
    }
    marker();
    println!("CHILD_OK");
}

/// Runs `test`'s child under strace (inside `outer`, if any): the child's run, and the
/// getrandom and mmap calls between each of its `markers` markers.
fn traced(
    test: &str,
    outer: &[&str],
    markers: usize,
) -> (reliability_common::ChildRun, Vec<usize>, Vec<usize>) {
    let log = log_path(test);
    let mut wrapper: Vec<String> = outer.iter().map(|s| s.to_string()).collect();
    wrapper.extend(strace_args(&log));
    let wrapper: Vec<&str> = wrapper.iter().map(String::as_str).collect();
    let run = run_child(test, "strace", &wrapper, Duration::from_secs(120));
    assert!(run.status.success(), "child failed: {run:#?}");
    assert_eq!(run.values("CHILD_OK").len(), 1, "{run:#?}");
    let (counts, mmaps) = (sections(&log), sections_of(&log, "mmap"));
    let _ = std::fs::remove_file(&log);
    assert_eq!(
        counts.len(),
        markers + 1,
        "markers missing from the strace log: {counts:?}"
    );
    (run, counts, mmaps)
}

/// Runs the child under strace (inside `outer`, if any) and checks the counts.
fn count(test: &str, outer: &[&str]) {
    let (run, counts, mmaps) = traced(test, outer, 5);
    let vdso = run.values("VDSO ")[0] == "true";
    println!(
        "{test}: path {}, getrandom syscalls (mmap): {} ({}) for the first {SYSCALL_DRAWS} \
         draws, {} ({}) for the next, {} for {} calls, {} for {REFUSED_CALLS} refused flags",
        run.values("PATH ")[0],
        counts[1],
        mmaps[1],
        counts[2],
        mmaps[2],
        counts[3],
        calls(),
        counts[4]
    );
    assert_eq!(counts[1], SYSCALL_DRAWS, "the first draws are system calls");
    // The next takes a state: the vDSO makes one system call for the state's key.
    assert_eq!(counts[2], 1, "the draw after the first ones");
    if vdso {
        // Under valgrind (no vDSO) the tool's own mappings would be counted.
        assert_eq!(mmaps[1], 0, "the first draws must map nothing");
        assert_eq!(mmaps[2], 1, "the next draw maps the process's first page");
    }
    let expected = if vdso { 0 } else { calls() };
    assert_eq!(
        counts[3],
        expected,
        "syscalls for {} calls of 16 bytes (vDSO: {vdso})",
        calls()
    );
    assert_eq!(
        counts[4], REFUSED_CALLS,
        "flags the vDSO must not answer: not exactly one syscall each"
    );
}

#[test]
fn getrandom_syscalls_counted_by_strace() {
    if child_mode().is_some() {
        return child();
    }
    if let Some(why) = strace_unusable() {
        return skip(TEST, "strace", why);
    }
    count(TEST, &[]);
}

#[test]
fn getrandom_syscalls_counted_by_strace_in_a_time_namespace() {
    if child_mode().is_some() {
        let offsets = std::fs::read_to_string("/proc/self/timens_offsets").unwrap_or_default();
        let inside = offsets
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["monotonic", "86400", "0"]);
        assert!(inside, "not in the time namespace: {offsets}");
        return child();
    }
    if let Some(why) = strace_unusable() {
        return skip(TIMENS_TEST, "strace", why);
    }
    let probe = process::run(
        std::process::Command::new("unshare").args([
            "--time",
            "--fork",
            "--monotonic",
            "1",
            "true",
        ]),
        Duration::from_secs(60),
    );
    match probe {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            return skip(
                TIMENS_TEST,
                "timens",
                format!(
                    "unshare --time refused: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                ),
            )
        }
        Err(process::Error::Spawn(e)) => {
            return skip(TIMENS_TEST, "timens", format!("no unshare: {e}"))
        }
        Err(hung) => panic!("{hung}"),
    }
    count(
        TIMENS_TEST,
        &[
            "unshare",
            "--time",
            "--fork",
            "--monotonic",
            "86400",
            "--boottime",
            "86400",
        ],
    );
}

const LONG_TEST: &str = "a_first_draw_past_256_bytes_takes_a_state_at_once";
/// Longer than the 256 bytes `getrandom(2)` never cuts short on a signal.
const LONG: usize = 4096;

/// A process's first draw, of `LONG` bytes, between two markers.
fn long_child() {
    let mut buf = vec![0u8; LONG];
    println!();
    // Without `std` (or a vDSO getrandom) every draw is the system call.
    let path = vdsotime::path(Function::Getrandom);
    println!("VDSO {}", matches!(path, Path::Vdso { .. }));
    marker();
    let n = vdsotime::getrandom(&mut buf, GrndFlags::NONE).expect("a long first draw");
    marker();
    assert_eq!(n, LONG);
    println!("CHILD_OK");
}

/// The system call may return fewer bytes than asked past 256 when a signal arrives,
/// the vDSO never: a long first draw is not left to the system call, it takes a state
/// (the process's first page, and the one system call for the state's key) at once.
#[test]
fn a_first_draw_past_256_bytes_takes_a_state_at_once() {
    if child_mode().is_some() {
        return long_child();
    }
    if let Some(why) = strace_unusable() {
        return skip(LONG_TEST, "strace", why);
    }
    let (run, counts, mmaps) = traced(LONG_TEST, &[], 2);
    let vdso = run.values("VDSO ")[0] == "true";
    println!(
        "{LONG_TEST}: vDSO getrandom {vdso}: {} getrandom system calls, {} mmap for a first \
         draw of {LONG} bytes",
        counts[1], mmaps[1]
    );
    // One system call either way: the state's key through the vDSO, or the draw itself.
    assert_eq!(counts[1], 1, "getrandom system calls for the first draw");
    if vdso {
        assert_eq!(
            mmaps[1], 1,
            "the long first draw must take a state (map its page)"
        );
    }
}
