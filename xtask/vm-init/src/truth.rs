//! `vm-truth`: what the machine's own kernel says about its clocks, read without vdsotime,
//! so the host can judge `vdsotime doctor`'s verdict against it. One fact a line:
//!
//! ```text
//! cmdline <kernel command line>
//! current_clocksource <name>            from /sys/devices/system/clocksource/clocksource0
//! available_clocksource <name> <name>...
//! vdso <address>|absent                 the process's AT_SYSINFO_EHDR
//! clock_gettime vdso|kernel|absent|error <e>
//!                                       the vDSO's own clock_gettime(CLOCK_MONOTONIC),
//!                                       under a seccomp filter that fails the system call
//! klog <line>                           kernel log lines about clocksources and the TSC
//! ```
//!
//! The seccomp probe is the proof that a vDSO call stayed in user space: the filter makes
//! the clock_gettime system call fail with a distinctive errno, so a call that succeeds
//! cannot have entered the kernel, and one that fails with that errno did (the vDSO's
//! fallback). The vDSO's function is found by [`crate::vdso`], not through libc.

use std::io::Write;

const SYSFS: &str = "/sys/devices/system/clocksource/clocksource0";

/// The errno the filter answers the clock_gettime system call with (EHWPOISON: nothing
/// else returns it from clock_gettime).
const PROBE_ERRNO: u32 = 133;

/// Prints every fact; returns the exit code.
pub fn main() -> i32 {
    let mut out = std::io::stdout().lock();
    let read = |f: &str| {
        std::fs::read_to_string(f).map_or_else(|e| format!("unreadable: {e}"), |s| s.trim().into())
    };
    let _ = writeln!(out, "cmdline {}", read("/proc/cmdline"));
    for f in ["current_clocksource", "available_clocksource"] {
        let _ = writeln!(out, "{f} {}", read(&format!("{SYSFS}/{f}")));
    }
    // SAFETY: getauxval only reads the process's auxiliary vector.
    let ehdr = unsafe { libc::getauxval(libc::AT_SYSINFO_EHDR) };
    if ehdr == 0 {
        let _ = writeln!(out, "vdso absent");
    } else {
        let _ = writeln!(out, "vdso {ehdr:#x}");
    }
    let _ = writeln!(out, "clock_gettime {}", probe());
    for line in kernel_log().lines().filter(|l| about_clocks(l)) {
        let _ = writeln!(out, "klog {}", line.trim_end());
    }
    0
}

/// Whether a kernel log line is about clocksources or the TSC.
fn about_clocks(line: &str) -> bool {
    let l = line.to_ascii_lowercase();
    ["clocksource", "tsc", "hpet", "acpi_pm", "vdso"]
        .iter()
        .any(|w| l.contains(w))
}

/// The whole kernel log buffer (syslog(2) READ_ALL), as text.
fn kernel_log() -> String {
    const SYSLOG_ACTION_READ_ALL: libc::c_int = 3;
    const SYSLOG_ACTION_SIZE_BUFFER: libc::c_int = 10;
    // SAFETY: SIZE_BUFFER takes no buffer.
    let size = unsafe { libc::klogctl(SYSLOG_ACTION_SIZE_BUFFER, std::ptr::null_mut(), 0) };
    let mut buf = vec![0u8; usize::try_from(size).unwrap_or(0).max(1 << 17)];
    let len = libc::c_int::try_from(buf.len()).unwrap_or(libc::c_int::MAX);
    // SAFETY: the kernel writes at most `len` bytes into `buf`, which has that many.
    let n = unsafe { libc::klogctl(SYSLOG_ACTION_READ_ALL, buf.as_mut_ptr().cast(), len) };
    buf.truncate(usize::try_from(n).unwrap_or(0));
    String::from_utf8_lossy(&buf).into_owned()
}

/// `vdso`, `kernel`, `absent` or `error ...`: how the vDSO's clock_gettime(CLOCK_MONOTONIC)
/// fares in a child process whose clock_gettime system calls fail with [`PROBE_ERRNO`].
fn probe() -> String {
    if crate::vdso::symbol(crate::vdso::CLOCK_GETTIME).is_none() {
        return "absent".into();
    }
    // SAFETY: the child only makes system calls and leaves with _exit (async-signal-safe;
    // this process has no other thread at this point of the plan).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return format!("error fork: {}", std::io::Error::last_os_error());
    }
    if pid == 0 {
        let code = match filtered_clock_gettime() {
            Ok(()) => 0,
            Err(e) if e == PROBE_ERRNO as i32 => 1,
            Err(_) => 2,
        };
        // SAFETY: leaves the forked child without running the parent's destructors.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waitpid writes only through the valid `status` pointer.
    if unsafe { libc::waitpid(pid, &mut status, 0) } != pid {
        return format!("error waitpid: {}", std::io::Error::last_os_error());
    }
    match libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)) {
        Some(0) => "vdso".into(),
        Some(1) => "kernel".into(),
        Some(2) => "error unexpected errno (or the filter was refused)".into(),
        _ => format!("error child status {status:#x}"),
    }
}

/// One BPF instruction (`struct sock_filter`).
#[repr(C)]
struct SockFilter {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

/// `struct sock_fprog`.
#[repr(C)]
struct SockFprog {
    len: libc::c_ushort,
    filter: *const SockFilter,
}

/// Installs the filter, then calls the vDSO's clock_gettime: `Err(errno)` if it failed.
fn filtered_clock_gettime() -> Result<(), i32> {
    const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const RET_K: u16 = 0x06; // BPF_RET | BPF_K
    const RET_ERRNO: u32 = 0x0005_0000;
    const RET_ALLOW: u32 = 0x7fff_0000;
    let nr = |n: libc::c_long| u32::try_from(n).map_err(|_| -1);
    // The time64 vDSO function of 32-bit ABIs falls back to clock_gettime64, 403 on every
    // one of them (the libc crate does not name it everywhere).
    #[cfg(target_pointer_width = "32")]
    let nr64 = 403;
    #[cfg(not(target_pointer_width = "32"))]
    let nr64 = nr(libc::SYS_clock_gettime)?;
    let insn = |code, jt, jf, k| SockFilter { code, jt, jf, k };
    let program = [
        insn(LD_W_ABS, 0, 0, 0), // seccomp_data.nr
        insn(JEQ_K, 1, 0, nr(libc::SYS_clock_gettime)?),
        insn(JEQ_K, 0, 1, nr64),
        insn(RET_K, 0, 0, RET_ERRNO | PROBE_ERRNO),
        insn(RET_K, 0, 0, RET_ALLOW),
    ];
    let prog = SockFprog {
        len: 5,
        filter: program.as_ptr(),
    };
    // SAFETY: prctl with integer arguments, then with a pointer to `prog`, which with the
    // program it points to outlives the call (the kernel copies the filter).
    let installed = unsafe {
        libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
            && libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &prog as *const SockFprog,
            ) == 0
    };
    if !installed {
        return Err(-1);
    }
    // A negative errno, or a positive one (powerpc's convention, with CR0.SO set).
    match crate::vdso::clock_gettime(libc::CLOCK_MONOTONIC) {
        Some(0) => Ok(()),
        Some(r) => Err(i32::try_from(r.abs()).unwrap_or(-1)),
        None => Err(-1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_log_lines_about_clocks() {
        assert!(about_clocks(
            "[    0.000000] clocksource: hpet: mask: 0xffffffff"
        ));
        assert!(about_clocks(
            "tsc: Marking TSC unstable due to clocksource watchdog"
        ));
        assert!(!about_clocks("Freeing unused kernel image memory"));
    }

    /// The probe on the machine running the tests: the filter installs (no `error`),
    /// and where the vDSO reads the TSC, the call stays in user space.
    #[test]
    fn the_probe_answers() {
        let p = probe();
        assert!(p == "vdso" || p == "kernel", "{p}");
        let current = std::fs::read_to_string(format!("{SYSFS}/current_clocksource"));
        // SAFETY: getauxval only reads the auxiliary vector.
        let vdso = unsafe { libc::getauxval(libc::AT_SYSINFO_EHDR) } != 0;
        if vdso && current.is_ok_and(|c| c.trim() == "tsc") {
            assert_eq!(p, "vdso");
        }
    }
}
