//! The watched processes (this program again, told by [`ROLE`] which calls to make) and
//! what the bench reads about processes in /proc.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// The environment variable that makes this program a worker: its value names the workload.
const ROLE: &str = "TOP_OVERHEAD_WORKER";

/// What a watched process does, flat out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// `syscall(SYS_clock_gettime, CLOCK_MONOTONIC)`: every call one `top` counts.
    Clock,
    /// `syscall(SYS_getppid)`: a system call `top` does not count.
    Other,
}

impl Workload {
    /// Both, in table order.
    pub const ALL: [Workload; 2] = [Workload::Clock, Workload::Other];

    fn name(self) -> &'static str {
        match self {
            Workload::Clock => "clock",
            Workload::Other => "getppid",
        }
    }

    /// The table's heading.
    pub fn title(self) -> &'static str {
        match self {
            Workload::Clock => {
                "The watched loop: back-to-back `syscall(SYS_clock_gettime, CLOCK_MONOTONIC)`"
            }
            Workload::Other => {
                "Other system calls: back-to-back `syscall(SYS_getppid)`, which top does not count"
            }
        }
    }

    fn call(self) {
        match self {
            Workload::Clock => {
                let mut ts = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                // SAFETY: a valid clock id and a valid out-pointer.
                unsafe { libc::syscall(libc::SYS_clock_gettime, libc::CLOCK_MONOTONIC, &mut ts) };
                std::hint::black_box(ts.tv_nsec);
            }
            Workload::Other => {
                // SAFETY: getppid takes no arguments and cannot fail.
                std::hint::black_box(unsafe { libc::syscall(libc::SYS_getppid) });
            }
        }
    }
}

/// The workload this process is to serve, if it was started as a worker.
pub fn role() -> Option<Workload> {
    let name = std::env::var(ROLE).ok()?;
    Workload::ALL.into_iter().find(|w| w.name() == name)
}

/// A worker's loop: each line on standard input, `n CALLS` (make that many calls) or
/// `t SECONDS` (call for that long), is answered by `CALLS NANOSECONDS`. Between commands
/// it waits in read(2), making no call of its workload; its clock is the vDSO's.
pub fn serve(workload: Workload) {
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let start = Instant::now();
        let calls = match line.split_once(' ') {
            Some(("n", n)) => {
                let n: u64 = n.trim().parse().unwrap_or(0);
                for _ in 0..n {
                    workload.call();
                }
                n
            }
            Some(("t", s)) => {
                let length = Duration::from_secs_f64(s.trim().parse().unwrap_or(0.0));
                let mut n = 0u64;
                while start.elapsed() < length {
                    for _ in 0..1024 {
                        workload.call();
                    }
                    n += 1024;
                }
                n
            }
            _ => 0,
        };
        let nanos = start.elapsed().as_nanos();
        if writeln!(out, "{calls} {nanos}")
            .and_then(|()| out.flush())
            .is_err()
        {
            break;
        }
    }
}

/// A running worker, killed when dropped.
pub struct Worker {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Worker {
    /// Starts this program as a worker for `workload`.
    pub fn spawn(workload: Workload) -> Result<Worker, String> {
        let exe = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
        let mut child = Command::new(exe)
            .env(ROLE, workload.name())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("starting the {} worker: {e}", workload.name()))?;
        match (child.stdin.take(), child.stdout.take()) {
            (Some(input), Some(output)) => Ok(Worker {
                child,
                input,
                output: BufReader::new(output),
            }),
            _ => Err("the worker's pipes".into()),
        }
    }

    /// Its pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    fn ask(&mut self, command: &str) -> Result<(u64, f64), String> {
        let fail = |e: std::io::Error| format!("worker {}: {e}", self.child.id());
        writeln!(self.input, "{command}")
            .and_then(|()| self.input.flush())
            .map_err(fail)?;
        let mut line = String::new();
        self.output.read_line(&mut line).map_err(fail)?;
        let mut parts = line.split_whitespace().map(str::parse::<u64>);
        match (parts.next(), parts.next()) {
            (Some(Ok(calls)), Some(Ok(nanos))) => Ok((calls, nanos as f64)),
            _ => Err(format!("worker {}: answered {line:?}", self.child.id())),
        }
    }

    /// ns per call over `calls` calls.
    pub fn trial(&mut self, calls: u64) -> Result<f64, String> {
        let (n, nanos) = self.ask(&format!("n {calls}"))?;
        Ok(nanos / n.max(1) as f64)
    }

    /// Calls flat out for `seconds`: the calls made.
    pub fn flat_out(&mut self, seconds: f64) -> Result<u64, String> {
        Ok(self.ask(&format!("t {seconds}"))?.0)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How many of `pid`'s descriptors' targets contain `what` (`bpf_link`, `perf_event`).
pub fn fds_of(pid: u32, what: &str) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|target| target.to_string_lossy().contains(what))
        .count()
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

/// CPU seconds (user + system, all its threads) `pid` has used.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(") ")?;
    let fields: Vec<&str> = rest.split(' ').collect();
    // `rest` starts at stat's 3rd field (the state); utime and stime are its 14th and 15th.
    let user: f64 = fields.get(11)?.parse().ok()?;
    let system: f64 = fields.get(12)?.parse().ok()?;
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Some((user + system) / hz)
}

/// The pid tracing `pid` (ptrace), 0 for none.
pub fn tracer_of(pid: u32) -> u32 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("TracerPid:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}
