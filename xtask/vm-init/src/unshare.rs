//! `unshare --time --fork [--monotonic S] [--boottime S] PROGRAM ARGS...`: the subset of
//! util-linux's `unshare` the time-namespace test uses, so it runs against the real kernel's
//! time-namespace vDSO pages inside the machines.
//!
//! unshare(CLONE_NEWTIME) gives this process's future children a new time namespace, whose
//! offsets are written to /proc/self/timens_offsets before the first child enters it.

use std::ffi::CString;

/// Runs the command; returns the exit code to leave with.
pub fn main(args: &[String]) -> i32 {
    match run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("unshare: {e}");
            1
        }
    }
}

fn run(args: &[String]) -> Result<i32, String> {
    let (mut time, mut fork) = (false, false);
    let mut offsets = String::new();
    let mut it = args.iter();
    let program = loop {
        let arg = it.next().ok_or("no program to run")?;
        match arg.as_str() {
            "--time" => time = true,
            "--fork" => fork = true,
            // Clock ids: CLOCK_MONOTONIC 1, CLOCK_BOOTTIME 7.
            "--monotonic" | "--boottime" => {
                let secs: i64 = it
                    .next()
                    .and_then(|s| s.parse().ok())
                    .ok_or(format!("{arg} needs seconds"))?;
                let id = if arg == "--monotonic" { 1 } else { 7 };
                offsets.push_str(&format!("{id} {secs} 0\n"));
            }
            other if other.starts_with('-') => return Err(format!("unsupported option {other}")),
            program => break program,
        }
    };
    if !(time && fork) {
        return Err("only --time --fork is supported".to_string());
    }
    // SAFETY: unshare takes no pointers.
    if unsafe { libc::unshare(libc::CLONE_NEWTIME) } != 0 {
        return Err(format!(
            "unshare(CLONE_NEWTIME): {}",
            std::io::Error::last_os_error()
        ));
    }
    if !offsets.is_empty() {
        std::fs::write("/proc/self/timens_offsets", &offsets)
            .map_err(|e| format!("/proc/self/timens_offsets: {e}"))?;
    }
    run_forked(program, it.as_slice())
}

/// fork() and exec, then wait: the child must not share this process's memory, as std's
/// spawn (vfork-like, CLONE_VM) would, because the kernel refuses a CLONE_VM child in a
/// time namespace other than its parent's (EINVAL).
fn run_forked(program: &str, args: &[String]) -> Result<i32, String> {
    let c = |s: &str| CString::new(s).map_err(|e| e.to_string());
    let mut owned = vec![c(program)?];
    for a in args {
        owned.push(c(a)?);
    }
    let mut argv: Vec<*const libc::c_char> = owned.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    // SAFETY: this applet is single-threaded; the child only calls execvp and _exit, which
    // are async-signal-safe, with pointers into `owned`, alive in both processes.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: argv is a NULL-terminated array of NUL-terminated strings (see above).
        unsafe {
            libc::execvp(argv[0], argv.as_ptr());
            libc::_exit(127);
        }
    }
    let mut status = 0;
    // SAFETY: waitpid writes only through the valid `status` pointer.
    if unsafe { libc::waitpid(pid, &mut status, 0) } != pid {
        return Err(format!("waitpid: {}", std::io::Error::last_os_error()));
    }
    Ok(if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    })
}
