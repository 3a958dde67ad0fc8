//! `vdsotime top` without the privilege to trace, and started with raised privileges:
//! its advice gives no capability to every user, it names a tracefs it may not enter as
//! such, and a setuid start reads no environment variable.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;

use crate::skip::skip;
use crate::{parts, scratch};

/// A copy of vdsotime with `mode`, owned by root, outside the (possibly private) build
/// tree; `None` after a SKIP when not root.
fn copy(test: &str, name: &str, mode: u32) -> Option<PathBuf> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip(test, "perf", "not root: cannot become nobody with setpriv");
        return None;
    }
    let dir = scratch(name);
    let exe = dir.join("vdsotime");
    std::fs::copy(env!("CARGO_BIN_EXE_vdsotime"), &exe).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(mode)).unwrap();
    Some(exe)
}

/// `exe top ...` as the user nobody, with `env`.
fn as_nobody(exe: &PathBuf, env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
        .arg(exe)
        .args(["top", "--once", "--duration", "0.5", "--json"])
        .env_remove("VDSOTIME_TRACEFS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    parts(&crate::process::output(&mut cmd, crate::LIMIT))
}

#[test]
fn without_privilege_it_names_cap_perfmon_and_exits_77() {
    const TEST: &str = "top_privilege::without_privilege_it_names_cap_perfmon_and_exits_77";
    let Some(exe) = copy(TEST, "top-unprivileged", 0o755) else {
        return;
    };
    let (c, out, err) = as_nobody(&exe, &[]);
    assert_eq!(c, 77, "stdout:\n{out}\nstderr:\n{err}");
    for needle in [
        "CAP_PERFMON",
        "perf_event_paranoid is ",
        "sudo vdsotime top",
    ] {
        assert!(err.contains(needle), "{needle:?} in:\n{err}");
    }
    // A capability on the installed binary is one every user of the host gets.
    assert!(!err.contains("command -v vdsotime"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// A tracefs mounted with mode 0700 (the kernel's default) is named as mounted and
/// closed to this user, not as missing.
#[test]
fn a_tracefs_closed_to_the_user_is_not_called_unmounted() {
    const TEST: &str = "top_privilege::a_tracefs_closed_to_the_user_is_not_called_unmounted";
    let Some(exe) = copy(TEST, "top-closed-tracefs", 0o755) else {
        return;
    };
    let tracing = std::path::Path::new("/sys/kernel/tracing");
    let mode = std::fs::metadata(tracing.join("events"))
        .ok()
        .and_then(|_| std::fs::metadata(tracing).ok())
        .map(|m| m.permissions().mode() & 0o777);
    if mode.is_none_or(|m| m & 0o001 != 0) {
        return skip(
            TEST,
            "tracefs",
            format!(
                "tracefs at {} is not mounted closed to others ({mode:?})",
                tracing.display()
            ),
        );
    }
    let (c, _, err) = as_nobody(&exe, &[]);
    assert_eq!(c, 77, "{err}");
    assert!(
        err.contains("tracefs is mounted at /sys/kernel/tracing with mode 700"),
        "{err}"
    );
    assert!(!err.contains("not mounted"), "{err}");
}

/// Started setuid root by another user, `top` takes no tracefs from the environment:
/// whoever started it could otherwise point it anywhere.
#[test]
fn a_setuid_start_ignores_the_environment() {
    const TEST: &str = "top_privilege::a_setuid_start_ignores_the_environment";
    let Some(exe) = copy(TEST, "top-setuid", 0o4755) else {
        return;
    };
    // A tracefs without the syscall tracepoints: followed, it makes top fail.
    let fake = exe.with_file_name("fake-tracefs");
    std::fs::create_dir_all(fake.join("events/sched")).unwrap();
    let fake = fake.display().to_string();
    let (c, out, err) = as_nobody(&exe, &[("VDSOTIME_TRACEFS", &fake)]);
    assert!(
        !err.contains(&fake),
        "the environment's tracefs was used:\n{err}"
    );
    assert_eq!(c, 0, "stdout:\n{out}\nstderr:\n{err}");
}

/// With CAP_PERFMON but without CAP_SYS_PTRACE (nor CAP_SYS_ADMIN), another user's
/// program cannot be read: its row says what is unknown and which capability would
/// reveal it, instead of taking it for a process that exited.
#[test]
fn another_user_s_program_unreadable_is_said_so() {
    const TEST: &str = "top_privilege::another_user_s_program_unreadable_is_said_so";
    let dir = scratch("top-no-ptrace");
    if !crate::top::traceable(TEST) {
        return;
    }
    let Some(exe) = crate::top::build_loop(TEST, &dir) else {
        return;
    };
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let looping = crate::top::start(
        Command::new("setpriv")
            .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
            .arg(&exe)
            .args(["syscall", "500", "60"]),
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    // setpriv has exec'd the loop: same pid.
    let pid = looping.pid().to_string();
    let mut top = Command::new("setpriv");
    top.args([
        "--bounding-set=-sys_ptrace,-sys_admin,-checkpoint_restore",
        "--inh-caps=-all",
    ])
    .arg(env!("CARGO_BIN_EXE_vdsotime"))
    .args(["top", "--once", "--duration", "1", "--json", "--pid", &pid]);
    let (c, out, err) = parts(&crate::process::output(&mut top, crate::LIMIT));
    if c == 77 {
        return skip(
            TEST,
            "perf",
            format!("cannot trace with CAP_PERFMON alone: {err}"),
        );
    }
    assert_eq!(c, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let rows = crate::top::rows_of(&doc, looping.pid());
    assert_eq!(rows.len(), 1, "{doc:#}");
    let row = &rows[0];
    assert_ne!(row["reason"], "exited_unchecked", "{row:#}");
    let unknown = row["unknown"].to_string();
    assert!(
        unknown.contains("executable: not permitted: needs CAP_SYS_PTRACE"),
        "{row:#}"
    );
}
