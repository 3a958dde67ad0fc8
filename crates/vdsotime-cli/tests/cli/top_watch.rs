//! Watching `vdsotime top` from outside: which descriptors and mappings it holds, when it
//! holds its backend, and a waiting program's calls let go; shared by the top tests.

use std::time::Duration;

use crate::top::Running;

/// Held by a test that makes thousands of distinct (process, call, clock) counters and by
/// one that times `top`'s own CPU, which reading those counters beside it would spend:
/// they run one at a time.
pub fn one_key_flood_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How many `perf_event` descriptors `pid` holds: `top` opens one per online CPU.
pub fn perf_events_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|target| target.to_string_lossy().contains("perf_event"))
        .count()
}

/// Standard output and error of `top`, read to their end (once it has exited).
pub fn finish(top: &mut Running) -> (String, String) {
    use std::io::Read;
    let (mut out, mut err) = (String::new(), String::new());
    if let Some(mut o) = top.0.stdout.take() {
        let _ = o.read_to_string(&mut out);
    }
    if let Some(mut e) = top.0.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    (out, err)
}

/// How many of `pid`'s descriptors' targets contain `what`.
pub fn fds_of(pid: u32, what: &str) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|target| target.to_string_lossy().contains(what))
        .count()
}

/// Whether `top` (pid) counts with `backend`: it holds a link for each BPF program (made
/// by the attach itself), or perf's event on every CPU with its ring buffer mapped.
pub fn ready(pid: u32, backend: &str) -> bool {
    match backend {
        // A BPF counter: every program it loaded attached (a link each; fentry loads all
        // its programs before attaching any).
        "tracepoint" | "fentry" => {
            let links = fds_of(pid, "bpf_link");
            links > 0 && links >= fds_of(pid, "bpf-prog")
        }
        _ => perf_events_of(pid) >= online_cpus() && perf_rings_of(pid) >= online_cpus(),
    }
}

/// Waits until `top` holds `backend` ([`ready`]); panics with what it printed if it exits
/// first or takes over two minutes.
pub fn wait_until_ready(top: &mut Running, backend: &str) {
    let waited = std::time::Instant::now();
    while !ready(top.pid(), backend) {
        let exited = top.0.try_wait().expect("top's status");
        if exited.is_some() || waited.elapsed() > Duration::from_secs(120) {
            let _ = top.0.kill();
            let (out, err) = finish(top);
            panic!("top never held its {backend} backend (exit {exited:?}):\n{out}\n{err}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Lets `program`, waiting for a byte on its standard input, make its calls, and waits
/// for its byte back once they are made; returns its standard input, still open.
pub fn make_calls(program: &mut Running, what: &str) -> std::process::ChildStdin {
    use std::io::{Read, Write};
    let mut stdin = program.0.stdin.take().expect("the program's stdin");
    stdin.write_all(b"g").expect("start the calls");
    let mut done = [0u8; 1];
    let mut stdout = program.0.stdout.take().expect("the program's stdout");
    let read = stdout.read_exact(&mut done);
    assert!(read.is_ok(), "{what} ended before its last call: {read:?}");
    stdin
}

/// How many of `pid`'s mappings are perf ring buffers.
pub fn perf_rings_of(pid: u32) -> usize {
    std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("perf_event"))
        .count()
}

/// The CPUs online (`/sys/devices/system/cpu/online`: `0-3,5`).
pub fn online_cpus() -> usize {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    text.trim()
        .split(',')
        .filter_map(|part| {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            Some(b.parse::<usize>().ok()? + 1 - a.parse::<usize>().ok()?)
        })
        .sum()
}
