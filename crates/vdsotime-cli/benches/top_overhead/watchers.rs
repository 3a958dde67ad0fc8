//! The watchers: `vdsotime top` with each backend, its peers (bpftrace, perf stat, perf
//! trace, strace), the syscall tracepoint alone, an empty program on `sys_enter`, and
//! nothing (the A/A row). Each is
//! started, waited for until it watches, and stopped (SIGINT, after which every tool
//! prints what it counted) the same way.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::empty_program::{self, EmptyProgram};
use crate::process::{fds_of, online_cpus, perf_rings_of, tracer_of};

/// `vdsotime top`'s backends, one row each; a backend the binary rejects gets a SKIP row.
pub const TOP_BACKENDS: &[&str] = &["tracepoint", "perf", "fentry", "auto"];

/// bpftrace's counter: a map keyed by process and clock on the syscall's own tracepoint.
const BPFTRACE: &str =
    "tracepoint:syscalls:sys_enter_clock_gettime { @[pid, args->which_clock] = count(); }";

/// How long a watcher may take to start watching.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a watcher may take to exit after SIGINT.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// strace stops the watched loop twice a call, and perf trace copies both ends of each
/// call to itself: their trials of the loop make this many times fewer calls.
const TRACERS_FEWER: u64 = 50;

/// One watcher.
#[derive(Clone, Debug)]
pub enum Watcher {
    /// Nothing: an unwatched trial against the unwatched reference (the noise).
    Nothing,
    /// `raw_syscalls:sys_enter` enabled through tracefs with a filter no call passes.
    Floor,
    /// An empty BPF program on the raw tracepoint `sys_enter` (`empty_program.rs`).
    EmptyProgram,
    /// `vdsotime top --once --backend` this.
    Top(&'static str),
    /// bpftrace counting in a map.
    Bpftrace,
    /// `perf stat -a` on the syscall's tracepoint.
    PerfStat,
    /// `perf trace -s` on the syscall.
    PerfTrace,
    /// `strace -c -f -p` the watched loop.
    Strace,
}

/// What every watcher is told: the watched loop's pid, the perf and vdsotime binaries,
/// the settle time.
#[derive(Debug)]
pub struct Context {
    pub watched: u32,
    pub perf: String,
    pub vdsotime: String,
    pub settle: Duration,
}

/// What a watcher counted of the watched loop's calls.
#[derive(Debug, Default, Clone)]
pub struct Counted {
    pub calls: u64,
    /// Calls the tool says it missed (top's `lost_samples`).
    pub lost: u64,
    /// Counted for the whole host (perf stat -a), not the loop alone.
    pub host_wide: bool,
    /// The backend top chose (auto).
    pub backend: Option<String>,
}

/// A started watcher.
#[derive(Debug)]
pub enum Active {
    Nothing,
    Floor(PathBuf),
    EmptyProgram(EmptyProgram),
    Tool(Tool),
}

impl Watcher {
    /// Every watcher, in table order.
    pub fn all() -> Vec<Watcher> {
        let mut all = vec![Watcher::Nothing, Watcher::Floor, Watcher::EmptyProgram];
        all.extend(TOP_BACKENDS.iter().map(|b| Watcher::Top(b)));
        all.extend([
            Watcher::Bpftrace,
            Watcher::PerfStat,
            Watcher::PerfTrace,
            Watcher::Strace,
        ]);
        all
    }

    /// Its row's name.
    pub fn name(&self) -> String {
        match self {
            Watcher::Nothing => "none (A/A)".into(),
            Watcher::Floor => "the tracepoint alone (tracefs, filter passing nothing)".into(),
            Watcher::EmptyProgram => "an empty BPF program on the raw tracepoint sys_enter".into(),
            Watcher::Top(b) => format!("vdsotime top --backend {b}"),
            Watcher::Bpftrace => "bpftrace, count() in a map".into(),
            Watcher::PerfStat => "perf stat -a".into(),
            Watcher::PerfTrace => "perf trace -s".into(),
            Watcher::Strace => "strace -c -f -p (the watched loop)".into(),
        }
    }

    /// Its name in TOP_OVERHEAD_WATCHERS: `none`, `floor`, `empty-program`, `top-BACKEND`, `bpftrace`,
    /// `perf-stat`, `perf-trace`, `strace`.
    pub fn key(&self) -> String {
        match self {
            Watcher::Nothing => "none".into(),
            Watcher::Floor => "floor".into(),
            Watcher::EmptyProgram => "empty-program".into(),
            Watcher::Top(b) => format!("top-{b}"),
            Watcher::Bpftrace => "bpftrace".into(),
            Watcher::PerfStat => "perf-stat".into(),
            Watcher::PerfTrace => "perf-trace".into(),
            Watcher::Strace => "strace".into(),
        }
    }

    /// Whether it is a process of its own (whose CPU can be read).
    pub fn is_tool(&self) -> bool {
        !matches!(
            self,
            Watcher::Nothing | Watcher::Floor | Watcher::EmptyProgram
        )
    }

    /// Calls per trial of a workload whose calls this watcher records (`records_it`).
    pub fn calls(&self, records_it: bool, calls: u64) -> u64 {
        match self {
            Watcher::Strace | Watcher::PerfTrace if records_it => (calls / TRACERS_FEWER).max(1000),
            _ => calls,
        }
    }

    /// Starts watching; returns once it watches, or why it cannot (a SKIP row's reason).
    pub fn start(&self, ctx: &Context) -> Result<Active, String> {
        let watched = ctx.watched.to_string();
        let (mut cmd, marker) = match self {
            Watcher::Nothing => return Ok(Active::Nothing),
            Watcher::Floor => return floor_on().map(Active::Floor),
            Watcher::EmptyProgram => return empty_program::attach().map(Active::EmptyProgram),
            Watcher::Top(b) => {
                let mut c = Command::new(&ctx.vdsotime);
                c.args(["top", "--once", "--duration", "3600", "--json"])
                    .args(["--backend", b]);
                (c, None)
            }
            Watcher::Bpftrace => {
                let mut c = Command::new("bpftrace");
                c.args(["-e", BPFTRACE]);
                (c, Some("Attaching"))
            }
            Watcher::PerfStat => {
                let mut c = Command::new(&ctx.perf);
                c.args(["stat", "-a", "-e", "syscalls:sys_enter_clock_gettime"]);
                (c, None)
            }
            Watcher::PerfTrace => {
                let mut c = Command::new(&ctx.perf);
                c.args(["trace", "-s", "-a", "-e", "clock_gettime"]);
                (c, None)
            }
            Watcher::Strace => {
                let mut c = Command::new("strace");
                c.args(["-c", "-f", "-p", &watched]);
                (c, None)
            }
        };
        let program = match self {
            Watcher::Top(_) => "vdsotime top".into(),
            _ => cmd.get_program().to_string_lossy().into_owned(),
        };
        let mut tool = Tool::spawn(&mut cmd, marker).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!(
                "{program} is not installed (crates/vdsotime-cli/bench/top_peers.sh installs it)"
            ),
            _ => format!("{program}: {e}"),
        })?;
        let cpus = online_cpus();
        let started = Instant::now();
        loop {
            let pid = tool.child.id();
            let ready = match self {
                Watcher::Top(_) => {
                    fds_of(pid, "bpf_link") > 0
                        || (fds_of(pid, "perf_event") >= cpus && perf_rings_of(pid) >= cpus)
                }
                Watcher::Bpftrace => tool.marked.load(Ordering::Relaxed),
                Watcher::Strace => tracer_of(ctx.watched) == pid,
                _ => fds_of(pid, "perf_event") >= cpus,
            };
            if ready {
                break;
            }
            if let Ok(Some(status)) = tool.child.try_wait() {
                let (_, out, err) = tool.stop();
                return Err(format!(
                    "{program} exited ({status}) before watching: {}",
                    first_line(&err).or(first_line(&out)).unwrap_or("no output")
                ));
            }
            if started.elapsed() > START_TIMEOUT {
                tool.stop();
                return Err(format!(
                    "{program} did not start watching in {START_TIMEOUT:?}"
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // Past the descriptors (or bpftrace's line), the attach completes.
        std::thread::sleep(ctx.settle);
        match tool.child.try_wait() {
            Ok(None) => Ok(Active::Tool(tool)),
            _ => {
                let (_, out, err) = tool.stop();
                Err(format!(
                    "{program} exited while starting: {}",
                    first_line(&err).or(first_line(&out)).unwrap_or("no output")
                ))
            }
        }
    }

    /// Stops watching: what it counted of `watched`'s calls, where it says.
    pub fn stop(&self, active: Active, watched: u32) -> Option<Counted> {
        match active {
            Active::Nothing => None,
            Active::Floor(dir) => {
                floor_off(&dir);
                None
            }
            Active::EmptyProgram(program) => {
                drop(program);
                None
            }
            Active::Tool(tool) => {
                let (_, out, err) = tool.stop();
                self.counted(&out, &err, watched)
            }
        }
    }

    /// Reads the tool's final output.
    fn counted(&self, out: &str, err: &str, pid: u32) -> Option<Counted> {
        let mine = |line: &str| -> Option<u64> {
            // bpftrace: `@[PID, CLOCK]: N`.
            let (key, n) = line.strip_prefix("@[")?.split_once("]: ")?;
            (key.split(',').next()?.trim() == pid.to_string()).then_some(n.trim().parse().ok()?)
        };
        match self {
            Watcher::Top(_) => {
                let doc: serde_json::Value = serde_json::from_str(out).ok()?;
                let calls = doc["rows"]
                    .as_array()?
                    .iter()
                    .filter(|r| r["pid"].as_u64() == Some(u64::from(pid)))
                    .filter(|r| r["syscall"] == "clock_gettime")
                    .filter_map(|r| r["calls"].as_u64())
                    .sum();
                Some(Counted {
                    calls,
                    lost: doc["lost_samples"].as_u64().unwrap_or(0),
                    host_wide: false,
                    backend: doc["backend"].as_str().map(String::from),
                })
            }
            Watcher::Bpftrace => Some(Counted {
                calls: out.lines().filter_map(mine).sum(),
                ..Counted::default()
            }),
            Watcher::PerfStat => {
                let line = err
                    .lines()
                    .find(|l| l.contains("sys_enter_clock_gettime"))?;
                let n = line.split_whitespace().next()?.replace(',', "");
                Some(Counted {
                    calls: n.parse().ok()?,
                    host_wide: true,
                    ..Counted::default()
                })
            }
            Watcher::PerfTrace => {
                // A section per thread, `comm (PID), N events, ...`, then its table.
                let header = format!("({pid}),");
                let row = err
                    .lines()
                    .skip_while(|l| !l.contains(&header))
                    .skip(1)
                    .take_while(|l| !l.contains(" events, "))
                    .find(|l| l.split_whitespace().next() == Some("clock_gettime"))?;
                Some(Counted {
                    calls: calls_column(row, 1)?,
                    ..Counted::default()
                })
            }
            Watcher::Strace => {
                let row = err
                    .lines()
                    .find(|l| l.trim_end().ends_with(" clock_gettime"))?;
                Some(Counted {
                    calls: calls_column(row, 3)?,
                    ..Counted::default()
                })
            }
            Watcher::Nothing | Watcher::Floor | Watcher::EmptyProgram => None,
        }
    }
}

/// The `index`th column of a summary row, a number.
fn calls_column(row: &str, index: usize) -> Option<u64> {
    row.split_whitespace().nth(index)?.parse().ok()
}

/// The first non-empty line of `text`.
fn first_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find(|l| !l.is_empty())
}

/// A watcher's process, its output read as it comes (a pipe never fills).
#[derive(Debug)]
pub struct Tool {
    pub child: Child,
    out: Option<JoinHandle<String>>,
    err: Option<JoinHandle<String>>,
    /// Whether a line of its standard output held the marker.
    marked: Arc<AtomicBool>,
}

impl Tool {
    fn spawn(cmd: &mut Command, marker: Option<&'static str>) -> std::io::Result<Tool> {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let marked = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&marked);
        let out = child.stdout.take().map(|o| {
            std::thread::spawn(move || {
                let mut text = String::new();
                for line in BufReader::new(o).lines().map_while(Result::ok) {
                    if marker.is_some_and(|m| line.contains(m)) {
                        flag.store(true, Ordering::Relaxed);
                    }
                    text.push_str(&line);
                    text.push('\n');
                }
                text
            })
        });
        let err = child.stderr.take().map(|mut e| {
            std::thread::spawn(move || {
                let mut text = String::new();
                let _ = e.read_to_string(&mut text);
                text
            })
        });
        Ok(Tool {
            child,
            out,
            err,
            marked,
        })
    }

    /// SIGINT, then SIGKILL if it has not exited in time: its status and output.
    fn stop(mut self) -> (Option<ExitStatus>, String, String) {
        if let Ok(pid) = libc::pid_t::try_from(self.child.id()) {
            // SAFETY: kill has no memory effects; the pid is our unreaped child's.
            unsafe { libc::kill(pid, libc::SIGINT) };
        }
        let started = Instant::now();
        let mut status = None;
        while started.elapsed() < STOP_TIMEOUT {
            if let Ok(Some(s)) = self.child.try_wait() {
                status = Some(s);
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if status.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let join =
            |h: Option<JoinHandle<String>>| h.and_then(|h| h.join().ok()).unwrap_or_default();
        (status, join(self.out.take()), join(self.err.take()))
    }
}

impl Drop for Tool {
    /// A tool not stopped (the bench failed) is killed rather than left watching.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The tracepoint's tracefs directory, if tracefs is mounted.
fn sys_enter_dir() -> Option<PathBuf> {
    ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .iter()
        .map(|d| Path::new(d).join("events/raw_syscalls/sys_enter"))
        .find(|d| d.join("enable").exists())
}

/// `raw_syscalls:sys_enter` enabled with a filter no call passes.
fn floor_on() -> Result<PathBuf, String> {
    let dir = sys_enter_dir().ok_or("tracefs is not mounted")?;
    let write = |file: &str, value: &str| {
        std::fs::write(dir.join(file), value).map_err(|e| format!("tracefs {file}: {e}"))
    };
    write("filter", "id == -1")?;
    if let Err(e) = write("enable", "1") {
        floor_off(&dir);
        return Err(e);
    }
    Ok(dir)
}

/// The tracepoint disabled and its filter cleared.
fn floor_off(dir: &Path) {
    let _ = std::fs::write(dir.join("enable"), "0");
    let _ = std::fs::write(dir.join("filter"), "0");
}
