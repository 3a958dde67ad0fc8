//! `vdsotime doctor`: proves how each call is answered, measures it, reads the machine,
//! and says in plain sentences whether the vDSO really serves the clocks and what to
//! change if not; as text, JSON or Prometheus metrics.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::arg_values;
use crate::call_paths::{self, PathEntry};
use crate::classify::{self, Verdict};
use crate::findings::{Severity, SCHEMA_VERSION};
use crate::measure::Plan;
use crate::output::{self, Exit};
use crate::profile::{self, Profile};
use crate::prometheus;

/// Exit status of a degraded verdict.
pub const EXIT_DEGRADED: i32 = 2;

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
  vdsotime doctor --format prometheus > /var/lib/node_exporter/vdsotime.prom
  vdsotime doctor --duration 0.2      measure longer for steadier figures"
)]
pub struct DoctorArgs {
    /// Seconds spent measuring each function through each path (at most 60).
    #[arg(long, default_value_t = 0.04, value_parser = arg_values::doctor_seconds)]
    pub duration: f64,
    /// Output format (--json is --format json).
    #[arg(long, value_enum, default_value_t = Format::Text, conflicts_with = "json")]
    pub format: Format,
    /// Judge a saved `doctor --json` document (or its `profile` object) instead of
    /// this machine.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
}

/// The `doctor --json` document.
#[derive(Debug, Serialize)]
pub struct DoctorReport<'a> {
    /// The document's version ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The tool's version.
    pub version: &'static str,
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

/// Prints the verdict: one line, then every finding, causes first.
pub fn print(v: &Verdict) {
    let head = if v.degraded() {
        "DEGRADED: some time calls are slower than this machine allows; the cause comes first."
    } else {
        "HEALTHY: the vDSO serves the time calls on this machine."
    };
    println!("doctor verdict: {head}");
    for f in &v.findings {
        let tag = match f.severity {
            Severity::Ok => "ok      ",
            Severity::Note => "note    ",
            Severity::Warning => "WARNING ",
            Severity::Degraded => "DEGRADED",
        };
        println!("  {tag} [{}] {}", f.code.as_str(), f.message);
    }
}

/// Prints how each call is answered and what it costs.
pub fn print_paths(paths: &[PathEntry]) {
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
    println!("{t}");
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
    let profile = match &args.profile {
        Some(p) => load(p)?,
        None => profile::collect(&plan(args.duration)).0,
    };
    let verdict = classify::classify(&profile);
    let paths = call_paths::derive(&profile);
    let format = if json { Format::Json } else { args.format };
    match format {
        Format::Json => output::print_json(&DoctorReport {
            schema_version: SCHEMA_VERSION,
            version: env!("CARGO_PKG_VERSION"),
            verdict: &verdict,
            paths: &paths,
            profile: &profile,
        })?,
        Format::Prometheus => {
            print!(
                "{}",
                prometheus::render(&profile, &verdict, &paths, unix_now())
            );
        }
        Format::Text => {
            print(&verdict);
            println!();
            print_paths(&paths);
        }
    }
    Ok(exit_code(&verdict))
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}
