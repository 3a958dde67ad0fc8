//! `vdsotime top`: which processes enter the kernel for the time, how often, and why.
//! `tracefs` finds the syscall tracepoint, `source` picks the backend that counts (`bpf`
//! in the kernel, at the time calls' functions or on the tracepoint, or `perf`, which
//! samples the tracepoint on every CPU), `syscalls`
//! and `clocks` name what was called, `process` and `host` gather the facts the
//! `reason` checks read, `tally` counts, and `render`, `prometheus` and `live` write.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use crate::output::{self, Exit};

pub mod binary;
#[cfg(target_pointer_width = "64")]
pub mod bpf;
#[cfg(not(target_pointer_width = "64"))]
#[path = "bpf/none.rs"]
pub mod bpf;
pub mod clocks;
pub mod host;
pub mod live;
pub mod object;
pub mod perf;
pub mod price;
pub mod process;
pub mod prometheus;
pub mod reason;
pub mod render;
pub mod source;
pub mod stop;
pub mod syscalls;
pub mod tally;
pub mod tracefs;

use tracefs::TraceError;

/// Exit status when the privilege to trace is missing (sysexits' EX_NOPERM).
pub const EXIT_NOPERM: i32 = 77;

/// What `top` writes.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A table, its totals and the fixes, for people.
    Table,
    /// One document with a row per (process, system call, clock).
    Json,
    /// node_exporter textfile-collector metrics: the top process names and a total.
    Prometheus,
}

/// Options of `top`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = concat!(
"How it counts: only the time system calls (clock_gettime, clock_gettime64,
gettimeofday, time, clock_getres, clock_getres_time64, getcpu, getrandom; on x86_64
also those of i386 processes), by one of three backends (--backend; the output says
which one counted, and why not a better one):
  fentry      BPF programs on the time calls' own kernel functions (__x64_sys_...,
              found in the kernel's BTF) count them in the kernel; no other system
              call pays anything. Needs root, or CAP_BPF with CAP_PERFMON, a kernel
              with BTF (/sys/kernel/btf/vmlinux), Linux 5.5+ on x86_64, 6.4+ on
              aarch64, and a 64-bit kernel
  tracepoint  a BPF program on the raw tracepoint sys_enter (every system call's
              entry) counts them in the kernel; needs root, or CAP_BPF with
              CAP_PERFMON (kernel 5.8+), and a 64-bit kernel
  perf        perf_event_open on raw_syscalls:sys_enter on every CPU copies each call
              here to be counted; needs root, or CAP_PERFMON with read access to tracefs
  auto        (the default) fentry, else tracepoint, else perf, with the reason
Only perf reads tracefs, mounting it at /sys/kernel/tracing if it is not mounted: the
BPF backends also count on a kernel built without syscall tracepoints. Reading other users' executables and C libraries
also needs CAP_SYS_PTRACE and CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE); without
them those facts are shown as unknown, with what would reveal them. To let a group
of users run it without sudo, give the capabilities to a copy only that group runs:
  sudo install -m 0750 -g tracers \"$(command -v vdsotime)\" /usr/local/libexec/vdsotime-top
  sudo setcap cap_perfmon,cap_dac_read_search,cap_sys_ptrace+ep /usr/local/libexec/vdsotime-top
Started with raised privileges (setuid, file capabilities), it reads no environment
variable (VDSOTIME_TRACEFS names another tracefs otherwise). Wasted CPU is calls/s x (system call - vDSO
cost), both measured on this host as `vdsotime doctor` measures them.

Reasons, checked in this order, each with its evidence (the first that holds counts):
  cpu_time_clock      the clock id is PROCESS/THREAD_CPUTIME_ID or clock_getcpuclockid's
  dynamic_clock       the clock id is a file descriptor's (a PTP device)
  aux_clock_disabled  CLOCK_AUX0..7 whose aux_clock_enable reads 0
  clock_not_in_vdso   any other id the vDSO never serves (alarm clocks, invalid ids)
  no_vdso_mapping     /proc/PID/maps has no [vdso] line
  clocksource         the doctor proved here that the vDSO falls back for MONOTONIC, and
                      the call reads the clocksource (gettimeofday; clock_gettime of a
                      high-resolution or aux clock, never a coarse one or time())
  getrandom_no_vdso   the vDSO lacks __vdso_getrandom, or the C library mapped does not
                      call it (glibc older than GLIBC_2.41 by its version definitions,
                      musl, or none: Go 1.24+ calls it on amd64, arm64, ppc64x, loong64,
                      s390x)
  static_binary       no PT_INTERP, and the executable nowhere names the vDSO's
                      clock_gettime, so nothing in it can call the vDSO
  exited_unchecked    exited before /proc could be read, or outside this PID namespace
                      (one row, pid 0); only the clock was checked
  direct_syscall      none of the above: the program calls the kernel itself
A process with a ptrace tracer (TracerPid in /proc/PID/status) is marked traced, as
well as given its reason: each of its calls also stops for the tracer. Facts that could
not be read (another user's executable without CAP_SYS_PTRACE) are listed as unknown.
On armv7, a kernel without a usable counter has no vDSO clock functions at all.

Exit status: 0 success, 1 error (no such --pid, tracing failed), 64 usage error,
77 not permitted (no root or CAP_PERFMON, or tracefs not readable; --backend
fentry or tracepoint without CAP_BPF).

Examples:
  vdsotime top                         # as root, as every example; live in a terminal, q quits
  vdsotime top --once --duration 2
  vdsotime top --once --duration 2 --json | jq '.rows[] | {pid, comm, syscall, reason}'
  vdsotime top --once --pid 1 --duration 2
  vdsotime top --duration 2 --format prometheus --output vdsotime_top.prom   # replaced whole"))]
pub struct TopArgs {
    /// Write one JSON document (--format json).
    #[arg(long)]
    pub json: bool,
    /// Watch once for --duration seconds and print, instead of the live view (the default
    /// when standard output is not a terminal).
    #[arg(long)]
    pub once: bool,
    /// Seconds to watch with --once (at most 3600).
    #[arg(long, default_value_t = 5.0, value_parser = duration)]
    pub duration: f64,
    /// Only this process (all its threads).
    #[arg(long, value_name = "PID")]
    pub pid: Option<u32>,
    /// Output format (--json is --format json).
    #[arg(long, value_enum, default_value_t = Format::Table, conflicts_with = "json")]
    pub format: Format,
    /// Write the output to FILE instead of standard output: written beside it under a
    /// temporary name, then renamed over it, so a reader (node_exporter's textfile
    /// collector) never sees half a file; on an error FILE keeps its previous contents.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// With --format prometheus: how many process names get their own series.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top: usize,
    /// How to count: auto (fentry, else tracepoint, else perf, saying why), fentry (BPF
    /// programs on the time calls' own kernel functions), tracepoint (a BPF program on
    /// every system call's entry) or perf (every call copied to this process).
    #[arg(long, value_enum, default_value_t = source::Backend::Auto)]
    pub backend: source::Backend,
}

fn duration(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if v == 0.0 {
        return Err(
            "0 seconds watches nothing: give how long to watch, above 0 and at most \
             3600 seconds (the live view, without --once, runs until q)"
                .into(),
        );
    }
    if v.is_finite() && v > 0.0 && v <= 3600.0 {
        Ok(v)
    } else {
        Err(format!("{s} is not between 0 and 3600 seconds"))
    }
}

/// The message for a refused trace: what is missing and how to grant it, to one person
/// or to a group, never to every user of the host.
fn not_permitted(what: &str) -> String {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map_or_else(|_| "unreadable".into(), |s| s.trim().to_string());
    format!(
        "not permitted to trace system calls: {what}.\n\
         `vdsotime top` needs root, or CAP_PERFMON with read access to tracefs (e.g. \
         CAP_DAC_READ_SEARCH), and CAP_SYS_PTRACE and CAP_SYS_ADMIN to read other users' \
         programs; kernel.perf_event_paranoid is {paranoid}.\n\
         Run it as root: sudo vdsotime top. To let only some users run it, give a copy \
         that only their group may run the capabilities (see `vdsotime top --help`); never \
         the installed binary, which every user runs."
    )
}

fn traced_error(e: TraceError) -> Exit {
    match e {
        TraceError::Denied(m) => {
            eprintln!("vdsotime: {}", not_permitted(&m));
            Ok(EXIT_NOPERM)
        }
        TraceError::Missing(m) => Err(format!("cannot trace system calls: {m}")),
    }
}

/// Runs `top`.
pub fn run(args: &TopArgs) -> Exit {
    let format = if args.json { Format::Json } else { args.format };
    // From the start, so that an interrupt while the host is measured still ends in a
    // (short) report.
    stop::catch();
    if let Some(pid) = args.pid {
        if !process::alive(pid) {
            return Err(format!("--pid {pid}: no such process (or it has exited)"));
        }
    }
    // The syscall tracepoint's layout, which only perf's ring buffers need: the BPF
    // backends attach without tracefs, so a kernel built without syscall tracepoints, or a
    // container without tracefs, still counts with them. Read before measuring, so that a
    // run that can only use perf fails at once.
    let layout = match (
        tracefs::locate().and_then(|dir| tracefs::sys_enter(&dir)),
        args.backend,
    ) {
        (Err(e), source::Backend::Perf) => return traced_error(e),
        (layout, _) => layout,
    };
    // Measured before tracing starts: the doctor's probe is a child process. Said as
    // what it is, not as a benchmark's progress.
    output::NO_PROGRESS.store(true, std::sync::atomic::Ordering::Relaxed);
    if std::io::stderr().is_terminal() {
        eprintln!("vdsotime top: measuring what a system call and a vDSO call cost here...");
    }
    let host = host::Host::collect(crate::doctor::DEFAULT_SECONDS);
    let mut chosen = match source::open(args.backend, layout, args.pid) {
        Ok(c) => c,
        Err(e) => return traced_error(e),
    };
    let mut tally = tally::Tally::new(args.pid);
    let live = !args.once && format == Format::Table && std::io::stdout().is_terminal();
    if live {
        live::run(&mut chosen, &mut tally, &host);
        return Ok(0);
    }
    let start = Instant::now();
    let length = Duration::from_secs_f64(args.duration);
    let every = chosen.source.every();
    stop::watch(
        length,
        every,
        || chosen.source.read(&mut tally),
        stop::interrupted,
    );
    let seconds = start.elapsed().as_secs_f64();
    let rows = tally.rows(seconds, &host);
    let doc = render::Document::new(&rows, seconds, &tally, &chosen, &host);
    let document = match format {
        Format::Json => serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())? + "\n",
        Format::Prometheus => prometheus::render(&doc, args.top),
        Format::Table => render::text(&doc, render::SCREEN_LINES),
    };
    crate::doctor::write_document(args.output.as_deref(), &document)?;
    Ok(0)
}

/// Held by the tests that make direct time system calls in bulk (pricing a call) and by
/// the tests of perf's tracer, whose buffers such a flood from a test running beside them
/// would overflow: they run one at a time.
#[cfg(test)]
pub(crate) fn one_flood_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// `top --help` and so its man page list every reason code, each with its meaning.
    #[test]
    fn the_help_lists_every_reason_code() {
        let mut cmd = crate::cli::Cli::command();
        let top = cmd.find_subcommand_mut("top").expect("top");
        let help = top.render_long_help().to_string();
        for (_, code, _) in super::reason::ALL {
            assert!(
                help.lines()
                    .any(|l| l.trim_start().starts_with(&format!("{code} "))),
                "{code} missing from:\n{help}"
            );
        }
    }
}
