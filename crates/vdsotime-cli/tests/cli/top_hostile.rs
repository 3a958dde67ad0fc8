//! `vdsotime top` as root against a process that aims it at something other than the
//! library it maps: a FIFO (an open or a read would block for ever) or a symbolic link
//! to /dev/zero (a read would never end) where its mapped `libc.so.6` was. `top` must
//! finish in its time, within a bounded memory, and read the mapped file itself.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::top::{build_c, rows_of, traceable, Running};
use crate::{parts, scratch};

/// Far above what `top --duration 1` takes here; a hang shows as the limit.
const LIMIT: Duration = Duration::from_secs(60);
/// The address space `top` may use: a read of /dev/zero into memory fails inside it.
const ADDRESS_SPACE: u64 = 4 << 30;

/// The resident size no child of this test binary reaches (a compiler, `top`) unless it
/// reads without end.
const MAX_RESIDENT_KIB: libc::c_long = 1 << 20;

/// The C library this test process maps (the real one, which the hostile copy copies).
fn own_libc() -> String {
    let maps = std::fs::read_to_string("/proc/self/maps").expect("own maps");
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.ends_with("/libc.so.6"))
        .expect("this test process maps libc.so.6")
        .to_string()
}

/// Starts the hostile process in `mode`, waits until its trap is set, and runs
/// `top --once --duration 1 --json --pid` on it with a time and memory limit.
fn top_on_hostile(test: &str, mode: &str) -> Option<Value> {
    let dir = scratch(&format!("top-hostile-{mode}"));
    if !traceable(test) {
        return None;
    }
    let exe = build_c(test, &dir, "top_hostile")?;
    let mut child = Running(
        Command::new(&exe)
            .arg(mode)
            .arg(&dir)
            .arg(own_libc())
            .arg("30")
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the hostile process"),
    );
    let mut ready = [0u8; 1];
    child
        .0
        .stdout
        .as_mut()
        .expect("its stdout")
        .read_exact(&mut ready)
        .expect("the hostile process set its trap");
    let pid = child.pid().to_string();
    let mut top = Command::new(env!("CARGO_BIN_EXE_vdsotime"));
    top.args(["top", "--once", "--duration", "1", "--json", "--pid", &pid]);
    use std::os::unix::process::CommandExt;
    let limit = libc::rlimit {
        rlim_cur: ADDRESS_SPACE,
        rlim_max: ADDRESS_SPACE,
    };
    // SAFETY: setrlimit is async-signal-safe and `limit` is a copy owned by the closure.
    unsafe {
        top.pre_exec(move || {
            if libc::setrlimit(libc::RLIMIT_AS, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let (c, out, err) = parts(&crate::process::output(&mut top, LIMIT));
    assert_eq!(c, 0, "top exited {c}\nstdout:\n{out}\nstderr:\n{err}");
    // The largest resident size of any child this test process has waited for: `top`'s
    // is far below it unless it read something without end into memory.
    // SAFETY: a zeroed rusage is a valid out-parameter.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid `who` and pointer.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    assert_eq!(rc, 0);
    let peak_kib = usage.ru_maxrss;
    assert!(
        peak_kib < MAX_RESIDENT_KIB,
        "a child (top) grew to {peak_kib} KiB resident\nstderr:\n{err}"
    );
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("bad JSON ({e}): {out}"));
    let rows = rows_of(&doc, child.pid());
    assert!(!rows.is_empty(), "the hostile process's calls: {doc:#}");
    Some(rows[0].clone())
}

/// The library the row names is the mapped file itself, read through
/// /proc/PID/map_files: glibc, with a version, whatever is at its old path now.
fn assert_the_mapped_file_was_read(row: &Value) {
    let libc = row["libc"].as_str().unwrap_or_default();
    assert!(libc.starts_with("glibc 2."), "{row:#}");
}

#[test]
fn a_fifo_where_the_mapped_libc_was_does_not_hang_top() {
    const TEST: &str = "top_hostile::a_fifo_where_the_mapped_libc_was_does_not_hang_top";
    if let Some(row) = top_on_hostile(TEST, "fifo") {
        assert_the_mapped_file_was_read(&row);
    }
}

#[test]
fn a_link_to_dev_zero_where_the_mapped_libc_was_does_not_balloon_top() {
    const TEST: &str =
        "top_hostile::a_link_to_dev_zero_where_the_mapped_libc_was_does_not_balloon_top";
    if let Some(row) = top_on_hostile(TEST, "zero") {
        assert_the_mapped_file_was_read(&row);
    }
}
