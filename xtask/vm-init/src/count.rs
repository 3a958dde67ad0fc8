//! An exact count for `vdsotime top` to match inside a machine.
//!
//! - `vm-syscalls CALLS` (or `vm-syscalls32 CALLS`, the i686 build of this program on an
//!   x86_64 kernel): waits for a byte on standard input, makes exactly `CALLS` direct
//!   `clock_gettime(CLOCK_MONOTONIC)` system calls (never the vDSO; a 32-bit build makes
//!   i386's), writes a byte to standard output, and exits when its standard input ends: a
//!   process whose every call `top` must count.
//! - `vm-top-count [--counted PATH] [--without-tracepoints] BACKEND CALLS PROGRAM
//!   ARGS...`: starts the counted program (`/bin/vm-syscalls`, or PATH), then PROGRAM
//!   (`vdsotime top --backend BACKEND ...`, its output this program's own; with
//!   `--without-tracepoints`, given a tracefs whose events have no `raw_syscalls`, as a
//!   kernel built without syscall tracepoints has, and saying so); once PROGRAM holds what BACKEND counts with
//!   (read from `/proc`, so nothing depends on timing), says so (with perf's ring buffer
//!   sizes and the page size where it maps any), lets the calls go, prints `counted PID
//!   CALLS`, ends PROGRAM's interval with SIGINT (what Ctrl-C does to `top`) and exits with
//!   PROGRAM's status. `/bin/vm-syscalls` exits right after its
//!   calls, long before `top`'s interval ends; another counted program lives until PROGRAM
//!   has ended, so that `top` examines it (a 32-bit program's numbers are read in its own
//!   table only once its executable is known, except by fentry).

use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where the counted program is (a link to this program).
const SYSCALLS_PROGRAM: &str = "/bin/vm-syscalls";
/// The tracefs `--without-tracepoints` gives PROGRAM: events, but no `raw_syscalls`.
const TRACEFS_WITHOUT_SYSCALLS: &str = "/tmp/tracefs-without-syscalls";
/// How long PROGRAM may take to hold its backend (its start measures what calls cost,
/// slow under TCG).
const READY_LIMIT: Duration = Duration::from_secs(150);

/// `vm-syscalls CALLS`.
pub fn syscalls(args: &[String]) -> i32 {
    let Some(calls) = args.first().and_then(|a| a.parse::<u64>().ok()) else {
        eprintln!("usage: vm-syscalls CALLS");
        return 2;
    };
    let mut go = [0u8; 1];
    if std::io::stdin().read_exact(&mut go).is_err() {
        eprintln!("vm-syscalls: standard input ended before the go");
        return 1;
    }
    // Room for either layout the kernel writes (32-bit and 64-bit `timespec`).
    let mut ts = [0u64; 2];
    for _ in 0..calls {
        // SAFETY: clock_gettime writes at most 16 bytes at `ts`, which holds 16.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_clock_gettime,
                libc::CLOCK_MONOTONIC,
                ts.as_mut_ptr(),
            )
        };
        if rc != 0 {
            eprintln!(
                "vm-syscalls: clock_gettime: {}",
                std::io::Error::last_os_error()
            );
            return 1;
        }
    }
    // Flushed now: a program kept alive until its standard input ends would otherwise
    // hold the byte in its buffer, and the parent wait for it forever.
    let mut stdout = std::io::stdout();
    if stdout
        .write_all(b"d")
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return 1;
    }
    // Until the standard input ends.
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    0
}

/// `vm-top-count BACKEND CALLS PROGRAM ARGS...`.
pub fn top_count(args: &[String]) -> i32 {
    let (counted_program, args) = match args {
        [flag, path, rest @ ..] if flag == "--counted" => (path.as_str(), rest),
        _ => (SYSCALLS_PROGRAM, args),
    };
    let (without_tracepoints, args) = match args {
        [flag, rest @ ..] if flag == "--without-tracepoints" => (true, rest),
        _ => (false, args),
    };
    let [backend, calls, program, rest @ ..] = args else {
        eprintln!(
            "usage: vm-top-count [--counted PATH] [--without-tracepoints] BACKEND CALLS \
             PROGRAM ARGS..."
        );
        return 2;
    };
    let mut watcher = Command::new(program);
    watcher.args(rest);
    if without_tracepoints {
        let events = format!("{TRACEFS_WITHOUT_SYSCALLS}/events/sched");
        if let Err(e) = std::fs::create_dir_all(&events) {
            eprintln!("vm-top-count: {events}: {e}");
            return 1;
        }
        watcher.env("VDSOTIME_TRACEFS", TRACEFS_WITHOUT_SYSCALLS);
        println!("tracefs without syscall tracepoints: {TRACEFS_WITHOUT_SYSCALLS}");
    }
    let counted = match Command::new(counted_program)
        .arg(calls)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("vm-top-count: {counted_program}: {e}");
            return 1;
        }
    };
    let mut counted = Reaped(counted);
    let mut watcher = match watcher.spawn() {
        Ok(c) => Reaped(c),
        Err(e) => {
            eprintln!("vm-top-count: {program}: {e}");
            return 1;
        }
    };
    let started = Instant::now();
    while !holds(watcher.0.id(), backend) {
        if let Ok(Some(s)) = watcher.0.try_wait() {
            eprintln!("vm-top-count: {program} exited before it held its {backend} backend: {s}");
            return s.code().unwrap_or(1);
        }
        if started.elapsed() > READY_LIMIT {
            eprintln!(
                "vm-top-count: {program} did not hold its {backend} backend in {READY_LIMIT:?}"
            );
            return 1;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    println!(
        "holding {backend} after {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let rings = rings(watcher.0.id());
    if !rings.is_empty() {
        // perf's events are switched on just after the last buffer is mapped, in a loop of
        // ioctls no file shows: this wait is that loop's, many times over.
        std::thread::sleep(Duration::from_secs(1));
        // SAFETY: sysconf reads a constant of the system; no memory is passed.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let kib: Vec<String> = rings.iter().map(|b| (b / 1024).to_string()).collect();
        println!(
            "perf rings: {} of {} KiB; page {} KiB",
            rings.len(),
            kib.join(", "),
            page / 1024
        );
    }
    let pid = counted.0.id();
    let (Some(mut stdin), Some(mut stdout)) = (counted.0.stdin.take(), counted.0.stdout.take())
    else {
        return 1;
    };
    let mut done = [0u8; 1];
    if stdin.write_all(b"g").is_err() || stdout.read_exact(&mut done).is_err() {
        eprintln!("vm-top-count: {counted_program} ended before its last call");
        return 1;
    }
    let short_lived = counted_program == SYSCALLS_PROGRAM;
    let kept = if short_lived {
        drop(stdin);
        match counted.0.wait() {
            Ok(s) if s.success() => None,
            other => {
                eprintln!("vm-top-count: {counted_program}: {other:?}");
                return 1;
            }
        }
    } else {
        Some(stdin)
    };
    println!("counted {pid} {calls}");
    // The interval ends now, as an operator's Ctrl-C ends it: `top` reads once more and
    // prints what it counted. Its `--duration` only bounds a run whose calls never came.
    // SAFETY: kill sends a signal to our own child, which has not been reaped.
    if unsafe { libc::kill(watcher.0.id() as libc::pid_t, libc::SIGINT) } != 0 {
        eprintln!(
            "vm-top-count: SIGINT to {program}: {}",
            std::io::Error::last_os_error()
        );
    }
    let status = match watcher.0.wait() {
        Ok(s) => s.code().unwrap_or(1),
        Err(e) => {
            eprintln!("vm-top-count: {program}: {e}");
            1
        }
    };
    drop(kept);
    status
}

/// Whether process `pid` holds what `backend` counts with (`auto`: either): a BPF counter
/// with every program it loaded attached (a link each, made by the attach itself; fentry
/// loads all its programs before it attaches any), or perf's event on every online CPU
/// with its ring buffer mapped.
fn holds(pid: u32, backend: &str) -> bool {
    let links: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .map(|t| t.to_string_lossy().into_owned())
        .collect();
    let has = |what: &str| links.iter().filter(|t| t.contains(what)).count();
    let cpus = online_cpus();
    let perf = cpus > 0 && has("perf_event") >= cpus && rings(pid).len() >= cpus;
    let bpf = has("bpf_link") > 0 && has("bpf_link") >= has("bpf-prog");
    match backend {
        "perf" => perf,
        "auto" => perf || bpf,
        _ => bpf,
    }
}

/// The size in bytes of each perf ring buffer process `pid` has mapped.
fn rings(pid: u32) -> Vec<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("perf_event"))
        .filter_map(|l| {
            let (start, end) = l.split_whitespace().next()?.split_once('-')?;
            let start = u64::from_str_radix(start, 16).ok()?;
            u64::from_str_radix(end, 16).ok()?.checked_sub(start)
        })
        .collect()
}

/// The CPUs online (`/sys/devices/system/cpu/online`: `0-3,5`).
fn online_cpus() -> usize {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    text.trim()
        .split(',')
        .filter_map(|part| {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            b.parse::<usize>()
                .ok()?
                .checked_add(1)?
                .checked_sub(a.parse().ok()?)
        })
        .sum()
}

/// A child killed and reaped when dropped, whatever path ends the count.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
