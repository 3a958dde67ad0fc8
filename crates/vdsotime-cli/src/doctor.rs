//! `vdsotime doctor`: measures, reads the machine, and says in plain sentences
//! whether the vDSO really serves the clocks and what to change if not.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::classify::{self, Severity, Verdict};
use crate::measure::Plan;
use crate::output::{self, Exit};
use crate::profile::{self, Profile};

/// Exit status of a degraded verdict.
pub const EXIT_DEGRADED: i32 = 2;

/// Options of `doctor`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "Exit status: 0 healthy, 2 degraded, 1 error.

Examples:
  vdsotime doctor
  vdsotime doctor --json | jq .verdict.status
  vdsotime doctor --duration 0.2      measure longer for a steadier verdict")]
pub struct DoctorArgs {
    /// Seconds spent measuring each function through each path.
    #[arg(long, default_value_t = 0.04)]
    pub duration: f64,
    /// Judge a saved profile (the `profile` object of `doctor --json`) instead of
    /// this machine.
    #[arg(long, value_name = "FILE", hide = true)]
    pub profile: Option<PathBuf>,
}

/// The `doctor --json` document.
#[derive(Debug, Serialize)]
pub struct DoctorReport<'a> {
    /// What was judged.
    pub profile: &'a Profile,
    /// The judgement.
    pub verdict: &'a Verdict,
}

/// The plan doctor measures with: `seconds` per path as 5 interleaved trials,
/// fastest of 5.
pub fn plan(seconds: f64) -> Result<Plan, String> {
    const TRIALS: u32 = 5;
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= 60.0) {
        return Err("--duration must be a positive number of seconds (at most 60)".into());
    }
    Ok(Plan {
        trials: TRIALS,
        calls: None,
        trial_time: Duration::from_secs_f64(seconds / f64::from(TRIALS)),
    })
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

/// Prints the verdict: one line, then every finding worst first.
pub fn print(v: &Verdict) {
    let head = if v.degraded() {
        "DEGRADED: some time calls are slower than this machine allows; see below."
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
        println!("  {tag} {}", f.message);
    }
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
        None => profile::collect(&plan(args.duration)?).0,
    };
    let verdict = classify::classify(&profile);
    if json {
        output::print_json(&DoctorReport {
            profile: &profile,
            verdict: &verdict,
        })?;
    } else {
        print(&verdict);
    }
    Ok(exit_code(&verdict))
}
