//! `vdsotime doctor`: proves how each call is answered, measures it, reads the machine,
//! and says in plain sentences whether the vDSO really serves the clocks and what to
//! change if not; as text, JSON or Prometheus metrics.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::arg_values;
use crate::measure::Plan;
use crate::output::{self, Exit};
use call_paths::PathEntry;
use classify::Verdict;
use findings::{Severity, SCHEMA_VERSION};
use profile::Profile;
use prometheus::Metrics;

pub mod call_paths;
pub mod classify;
pub mod findings;
pub mod install_metrics;
mod no_links;
pub mod profile;
pub mod prometheus;
pub mod replace_file;
pub mod seccomp;

/// Exit status of a degraded verdict.
pub const EXIT_DEGRADED: i32 = 2;

/// Seconds measured per function and path by default (also `top`'s measurement).
pub const DEFAULT_SECONDS: f64 = 0.04;

/// What `doctor` writes.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Sentences and a table, for people.
    Text,
    /// The `doctor --json` document.
    Json,
    /// node_exporter textfile-collector metrics.
    Prometheus,
}

/// Options of `doctor`.
#[derive(clap::Args, Debug, Clone)]
#[command(
    after_help = "How it decides: a child process forbids the time system calls with a seccomp
filter that makes them fail with a distinctive errno, then calls each vDSO
function; a call that returns that errno entered the kernel. Where seccomp is
unavailable, a path is judged by its cost against the system call's.

Exit status: 0 healthy, 2 degraded, 1 error (could not measure or read),
64 usage error (unknown option, bad value).

Examples:
  vdsotime doctor
  vdsotime doctor --json | jq '.verdict.findings[0].code'
  vdsotime doctor --format prometheus > vdsotime.prom   # for node_exporter's textfile collector
  vdsotime doctor --format prometheus --output vdsotime.prom   # replaced whole, as a timer needs
  vdsotime doctor --duration 0.1       # measure longer for steadier figures"
)]
pub struct DoctorArgs {
    /// Write the findings, the path of each call and the profile as JSON (--format json).
    #[arg(long)]
    pub json: bool,
    /// Seconds spent measuring each function through each path (at most 60).
    #[arg(long, default_value_t = DEFAULT_SECONDS, value_parser = arg_values::doctor_seconds)]
    pub duration: f64,
    /// Output format (--json is --format json).
    #[arg(long, value_enum, default_value_t = Format::Text, conflicts_with = "json")]
    pub format: Format,
    /// Judge a saved `doctor --json` document (or its `profile` object) instead of
    /// this machine.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// Write the document to FILE instead of standard output: written beside it under a
    /// temporary name, then renamed over it, so a reader (node_exporter's textfile
    /// collector) never sees half a file; on an error FILE keeps its previous contents
    /// and the exit status is 1.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Which metrics --format prometheus writes: `default` (the verdict, one gauge per
    /// call saying whether the vDSO serves it, the findings) or `full` (also each call's
    /// path and measured cost: several times the series).
    #[arg(long, value_enum, value_name = "SET", default_value_t = Metrics::Default)]
    pub metrics: Metrics,
    /// Install FILE, the metrics an unprivileged run wrote, as --output (mode 0644,
    /// owned by the caller, replaced whole) and judge nothing: the privileged step of
    /// vdsotime-doctor.service (see /usr/share/doc/vdsotime/fleet.md). Refused: a FILE
    /// reached through a symbolic link, not a regular file, over 1 MiB, or naming a
    /// family that is not vdsotime_.
    #[arg(long, value_name = "FILE", requires = "output", conflicts_with_all = ["profile", "json"])]
    pub install_metrics: Option<PathBuf>,
}

/// What a verdict judges: this machine, measured now, or a saved profile.
#[derive(Debug, Serialize)]
pub struct Judged {
    /// `this_machine` or `saved_profile`.
    pub source: &'static str,
    /// The saved profile's file, as given to `--profile`; absent for this machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The kernel release of the machine judged.
    pub kernel_release: String,
    /// Its architecture (`uname -m`).
    pub machine: String,
}

impl Judged {
    /// What judging `profile`, loaded from `file` if it was, is about.
    pub fn new(file: Option<&Path>, profile: &Profile) -> Judged {
        Judged {
            source: if file.is_some() {
                "saved_profile"
            } else {
                "this_machine"
            },
            file: file.map(|f| f.display().to_string()),
            kernel_release: profile.facts.kernel_release.clone(),
            machine: profile.facts.machine.clone(),
        }
    }

    /// How the verdict's sentence names the machine judged.
    pub fn machine_words(&self) -> &'static str {
        if self.file.is_some() {
            "the profiled machine"
        } else {
            "this machine"
        }
    }

    /// The line that opens the text of a saved profile's verdict
    /// ([`install_metrics::HEADER_START`], then the profile); none for this machine.
    pub fn header(&self) -> Option<String> {
        let file = self.file.as_deref()?;
        Some(format!(
            "{}judging the saved profile {file}, taken on Linux {} ({}), not this machine: every finding below is about that machine.\n",
            install_metrics::HEADER_START,
            self.kernel_release,
            self.machine
        ))
    }
}

/// The `doctor --json` document.
#[derive(Debug, Serialize)]
pub struct DoctorReport<'a> {
    /// The document's version ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The tool's version.
    pub version: &'static str,
    /// What was judged: this machine or a saved profile (its file and kernel).
    pub judged: &'a Judged,
    /// The judgement.
    pub verdict: &'a Verdict,
    /// How each call is answered.
    pub paths: &'a [PathEntry],
    /// What was judged.
    pub profile: &'a Profile,
}

/// The plan doctor measures with: `seconds` per path as 5 interleaved trials,
/// fastest of 5.
pub fn plan(seconds: f64) -> Plan {
    const TRIALS: u32 = 5;
    Plan {
        trials: TRIALS,
        calls: None,
        trial_time: Duration::from_secs_f64(seconds / f64::from(TRIALS)),
    }
}

fn load(path: &PathBuf) -> Result<Profile, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    // Accept both a bare profile and a whole `doctor --json` document.
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let inner = value.get("profile").cloned().unwrap_or(value);
    serde_json::from_value(inner)
        .map_err(|e| format!("{}: not a doctor profile: {e}", path.display()))
}

/// The verdict as text: one line, then every finding, causes first. `machine` names
/// the machine judged: "this machine", or "the profiled machine" for a saved profile.
pub fn verdict_text(v: &Verdict, machine: &str) -> String {
    let head = if v.degraded() {
        format!(
            "DEGRADED: some time calls are slower than {machine} allows; the cause comes first."
        )
    } else {
        format!("HEALTHY: the vDSO serves the time calls on {machine}.")
    };
    let mut out = format!("doctor verdict: {head}\n");
    for f in &v.findings {
        let tag = match f.severity {
            Severity::Ok => "ok      ",
            Severity::Note => "note    ",
            Severity::Warning => "WARNING ",
            Severity::Degraded => "DEGRADED",
        };
        out += &format!("  {tag} [{}] {}\n", f.code.as_str(), f.message);
    }
    out
}

/// Prints this machine's verdict: one line, then every finding, causes first.
pub fn print(v: &Verdict) {
    print!("{}", verdict_text(v, "this machine"));
}

/// How each call is answered and what it costs, as a table.
pub fn paths_table(paths: &[PathEntry]) -> String {
    let mut t = output::table(&[
        "call",
        "path",
        "how known",
        "vdsotime ns",
        "syscall ns",
        "route",
    ]);
    for e in paths {
        let ns = |v: Option<f64>| v.map_or_else(|| "-".into(), output::ns);
        t.add_row(vec![
            e.label(),
            e.path.as_str().to_string(),
            e.method.as_str().to_string(),
            ns(e.vdso_ns),
            ns(e.syscall_ns),
            e.route.clone(),
        ]);
    }
    output::align_numbers(&mut t);
    format!("{t}\n")
}

/// Exit status for a verdict.
pub fn exit_code(v: &Verdict) -> i32 {
    if v.degraded() {
        EXIT_DEGRADED
    } else {
        0
    }
}

/// Runs `vdsotime doctor`.
pub fn run(args: &DoctorArgs, json: bool) -> Exit {
    if let (Some(src), Some(dst)) = (&args.install_metrics, &args.output) {
        install_metrics::install(src, dst)?;
        return Ok(0);
    }
    let profile = match &args.profile {
        Some(p) => load(p)?,
        None => profile::collect(&plan(args.duration)).0,
    };
    let judged = Judged::new(args.profile.as_deref(), &profile);
    let verdict = classify::classify(&profile);
    let paths = call_paths::derive(&profile);
    let format = if json { Format::Json } else { args.format };
    let document = match format {
        Format::Json => {
            let report = DoctorReport {
                schema_version: SCHEMA_VERSION,
                version: env!("CARGO_PKG_VERSION"),
                judged: &judged,
                verdict: &verdict,
                paths: &paths,
                profile: &profile,
            };
            serde_json::to_string_pretty(&report).map_err(|e| format!("JSON: {e}"))? + "\n"
        }
        Format::Prometheus => {
            let about = judged
                .header()
                .map(|h| format!("# {h}"))
                .unwrap_or_default();
            about + &prometheus::render(&profile, &verdict, &paths, unix_now(), args.metrics)
        }
        Format::Text => format!(
            "{}{}\n{}",
            judged.header().unwrap_or_default(),
            verdict_text(&verdict, judged.machine_words()),
            paths_table(&paths)
        ),
    };
    write_document(args.output.as_deref(), &document)?;
    Ok(exit_code(&verdict))
}

/// What the doctor finds of this host's clocksource and call costs: what `top` judges
/// and prices by.
#[derive(Clone, Debug, Default)]
pub struct ClocksourceFacts {
    /// The current clocksource's name.
    pub name: Option<String>,
    /// The doctor proved (or timed) that the vDSO falls back to the system call for
    /// `clock_gettime(MONOTONIC)`: it cannot read the clocksource in user space.
    pub vdso_falls_back: bool,
    /// Each timed function's system call and vDSO costs.
    pub costs: Vec<profile::Cost>,
}

/// Probes and measures this host as `vdsotime doctor --duration SECONDS` does, and gives
/// its clocksource facts: the one way into the doctor for another command.
pub fn clocksource_facts(seconds: f64) -> ClocksourceFacts {
    let (profile, _) = profile::collect(&plan(seconds));
    let paths = call_paths::derive(&profile);
    let vdso_falls_back = paths.iter().any(|p| {
        p.function == "clock_gettime"
            && p.clock.as_deref() == Some("MONOTONIC")
            && p.path == call_paths::PathKind::VdsoFallback
    });
    ClocksourceFacts {
        name: profile.facts.clocksource.clone(),
        vdso_falls_back,
        costs: profile.costs,
    }
}

/// Writes `document` to `file` whole or not at all ([`replace_file::replace`]), or to
/// standard output: `--output` of `doctor` and `top`.
pub fn write_document(file: Option<&std::path::Path>, document: &str) -> Result<(), String> {
    match file {
        Some(file) => replace_file::replace(file, document.as_bytes()),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(document.as_bytes())
                .and_then(|()| out.flush())
                .map_err(|e| format!("stdout: {e}"))
        }
    }
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}
