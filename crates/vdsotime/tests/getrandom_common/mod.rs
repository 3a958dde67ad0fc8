//! Helpers shared by the `getrandom_*` tests: the kernel's own answer (libc's
//! `syscall(2)`, which shares no code with vdsotime), `strace` counts of getrandom
//! system calls between two marker system calls, and visible SKIP lines.
#![allow(dead_code)]

use vdsotime::{Errno, GrndFlags};

/// The visible-skip helper and the strace check every test of the workspace shares.
#[allow(clippy::duplicate_mod)] // a test file may have `support` too
#[path = "../support/skip.rs"]
mod visible;
#[allow(unused_imports)] // not every test file skips
pub use visible::skip;
#[allow(clippy::duplicate_mod)]
#[path = "../support/strace.rs"]
mod strace;
#[allow(unused_imports)] // not every test file counts system calls
pub use strace::unusable as strace_unusable;
/// Child processes with a time limit that kills their whole process group.
#[allow(clippy::duplicate_mod)]
#[path = "../support/process.rs"]
pub mod process;

/// `getrandom(2)` by libc's `syscall`: the reference.
pub fn kernel(buf: &mut [u8], flags: GrndFlags) -> Result<usize, Errno> {
    // SAFETY: the kernel writes at most `buf.len()` bytes into `buf`.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_getrandom,
            buf.as_mut_ptr(),
            buf.len(),
            flags.raw() as libc::c_uint,
        )
    };
    if ret < 0 {
        Err(Errno::from_raw(
            std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
        ))
    } else {
        Ok(ret as usize)
    }
}

/// A path no program looks for: `faccessat` of it marks sections of an strace log
/// (valgrind and the test harness make other system calls of their own).
const MARKER: &std::ffi::CStr = c"/vdsotime-getrandom-strace-marker";

/// Marks a section boundary in the strace log.
pub fn marker() {
    // SAFETY: faccessat only reads the NUL-terminated path.
    unsafe {
        libc::syscall(
            libc::SYS_faccessat,
            libc::AT_FDCWD,
            MARKER.as_ptr(),
            libc::F_OK,
        )
    };
}

/// The strace command that logs getrandom and the markers to `log`, for
/// `run_child`'s wrapper (after any other wrapper such as `unshare`).
pub fn strace_args(log: &std::path::Path) -> Vec<String> {
    [
        "strace",
        "-f",
        "-qq",
        "-e",
        // access(2): Python's os.access; faccessat2: a libc that prefers it
        // mmap: the page a process's first state takes
        "trace=getrandom,mmap,faccessat,faccessat2,access",
        "-o",
        log.to_str().expect("UTF-8 temp path"),
    ]
    .map(String::from)
    .to_vec()
}

/// getrandom system calls in each section of an strace log: before the first marker,
/// between the first and second, and so on.
pub fn sections(log: &std::path::Path) -> Vec<usize> {
    sections_of(log, "getrandom")
}

/// [`sections`] for the system call `name`.
pub fn sections_of(log: &std::path::Path, name: &str) -> Vec<usize> {
    let text = std::fs::read_to_string(log).expect("strace log");
    let call = format!("{name}(");
    let mut counts = vec![0];
    for line in text.lines() {
        if line.contains(MARKER.to_str().expect("ASCII")) {
            counts.push(0);
        } else if line.contains(&call) {
            *counts.last_mut().expect("non-empty") += 1;
        }
    }
    counts
}

/// Draws that take a thread's vDSO state: its first `SYSCALL_DRAWS` make the system
/// call, the next takes the state. A warm-up of this many leaves only vDSO draws.
pub fn warm_up_draws() -> usize {
    vdsotime::random::SYSCALL_DRAWS + 1
}

/// A fresh log path for one strace run.
pub fn log_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "vdsotime-getrandom-{}-{name}.strace",
        std::process::id()
    ))
}
