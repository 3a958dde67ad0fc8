//! `doctor --format prometheus`: the verdict as node_exporter textfile-collector
//! metrics (the Prometheus text exposition format), so a fleet can alert on a machine
//! whose clocks went slow. Base units (seconds), `_info` gauges for text, one gauge per
//! call saying whether the vDSO serves it; the per-path breakdown and the measured costs
//! only with `--metrics full`, so a host exports few series by default.

use std::fmt::Write;

use crate::doctor::call_paths::{PathEntry, PathKind};
use crate::doctor::classify::Verdict;
use crate::doctor::findings::{Code, Severity, SCHEMA_VERSION};
use crate::doctor::profile::Profile;
use crate::doctor::seccomp::Method;

/// Escapes a label value: backslash, double quote and newline.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// `{a="x",b="y"}`, or nothing without labels.
fn labels(pairs: &[(&str, &str)]) -> String {
    if pairs.is_empty() {
        return String::new();
    }
    let inner: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    format!("{{{}}}", inner.join(","))
}

/// Writes metric families, each HELP and TYPE line once before its samples.
/// (Also the writer of `top --format prometheus`.)
pub(crate) struct Writer {
    pub(crate) out: String,
}

impl Writer {
    pub(crate) fn family(&mut self, name: &str, help: &str) {
        // HELP text escapes backslash and newline only.
        let help = help.replace('\\', "\\\\").replace('\n', "\\n");
        let _ = writeln!(self.out, "# HELP {name} {help}");
        let _ = writeln!(self.out, "# TYPE {name} gauge");
    }

    pub(crate) fn sample(&mut self, name: &str, pairs: &[(&str, &str)], value: f64) {
        if value.is_finite() {
            let _ = writeln!(self.out, "{name}{} {value}", labels(pairs));
        }
    }
}

fn bool_value(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

/// `v` to 4 significant digits: what a timed trial can tell apart, no more.
fn measured(v: f64) -> f64 {
    format!("{v:.3e}").parse().unwrap_or(v)
}

/// Which metrics `doctor --format prometheus` writes.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Metrics {
    /// The verdict, one gauge per call saying whether the vDSO serves it, the findings:
    /// few series, for every host of a fleet.
    #[default]
    Default,
    /// Also each call's path (one-hot) and its measured cost through each route.
    Full,
}

/// Whether a call is answered in user space: by the vDSO, or getcpu from the rseq area.
fn served(path: PathKind) -> bool {
    matches!(path, PathKind::Vdso | PathKind::Rseq)
}

/// The checks the doctor could not make on this run, by name (`kernel_log`: /dev/kmsg).
pub const CHECKS: [&str; 1] = ["kernel_log"];

/// The metrics of one doctor run; `now` is the run's time, in seconds since the epoch.
pub fn render(p: &Profile, v: &Verdict, paths: &[PathEntry], now: f64, set: Metrics) -> String {
    let mut w = Writer { out: String::new() };
    let schema = SCHEMA_VERSION.to_string();
    w.family(
        "vdsotime_doctor_info",
        "The vdsotime doctor that wrote these metrics: its version and JSON schema version.",
    );
    w.sample(
        "vdsotime_doctor_info",
        &[
            ("version", env!("CARGO_PKG_VERSION")),
            ("schema_version", &schema),
        ],
        1.0,
    );
    w.family(
        "vdsotime_doctor_healthy",
        "1 when the vDSO serves the time calls as well as this machine allows, 0 when degraded (see vdsotime_findings).",
    );
    w.sample("vdsotime_doctor_healthy", &[], bool_value(!v.degraded()));
    w.family(
        "vdsotime_doctor_last_run_timestamp_seconds",
        "When the doctor ran, in whole seconds since the Unix epoch.",
    );
    let _ = writeln!(
        w.out,
        "vdsotime_doctor_last_run_timestamp_seconds {}",
        now.max(0.0).floor()
    );
    let seccomp = p
        .probe
        .as_ref()
        .is_some_and(|r| r.method == Method::Seccomp);
    w.family(
        "vdsotime_doctor_method",
        "How the paths were established: 1 for the method used (seccomp: proved under a filter; timing: judged by cost).",
    );
    for (m, used) in [("seccomp", seccomp), ("timing", !seccomp)] {
        w.sample("vdsotime_doctor_method", &[("method", m)], bool_value(used));
    }
    w.family(
        "vdsotime_doctor_check_skipped",
        "1 when the doctor could not make a check on this run (kernel_log: /dev/kmsg was unreadable, so a TSC the kernel marked unstable goes unseen: grant CAP_SYSLOG).",
    );
    for check in CHECKS {
        let skipped = check == "kernel_log" && kernel_log_unread(p);
        w.sample(
            "vdsotime_doctor_check_skipped",
            &[("check", check)],
            bool_value(skipped),
        );
    }
    w.family(
        "vdsotime_vdso_present",
        "1 when the process has a vDSO (0: booted with vdso=0, or under an emulator such as valgrind).",
    );
    w.sample("vdsotime_vdso_present", &[], bool_value(p.has_vdso));
    w.family(
        "vdsotime_clocksource_info",
        "The kernel's current clocksource, with the kernel release and machine (value 1).",
    );
    let f = &p.facts;
    w.sample(
        "vdsotime_clocksource_info",
        &[
            ("clocksource", f.clocksource.as_deref().unwrap_or("unknown")),
            ("kernel", &f.kernel_release),
            ("machine", &f.machine),
        ],
        1.0,
    );
    if v.findings.iter().any(|x| x.code == Code::TscMarkedUnstable) {
        w.family(
            "vdsotime_tsc_unstable_info",
            "Present when the doctor found the TSC marked unstable (tsc_marked_unstable), with the kernel log's reason (boot parameter for tsc=unstable; unknown when only inferred) (value 1).",
        );
        w.sample(
            "vdsotime_tsc_unstable_info",
            &[("reason", tsc_unstable_reason(p))],
            1.0,
        );
    }
    w.family(
        "vdsotime_vdso_serves",
        "1 when the call is answered in user space (by the vDSO; getcpu also from glibc's rseq area), 0 when it enters the kernel.",
    );
    for e in paths {
        let clock = e.clock.as_deref().unwrap_or("");
        w.sample(
            "vdsotime_vdso_serves",
            &[("function", &e.function), ("clock", clock)],
            bool_value(served(e.path)),
        );
    }
    if set == Metrics::Full {
        full(&mut w, paths);
    }
    w.family(
        "vdsotime_findings",
        "Findings of the doctor by code and severity (the codes are listed in vdsotime-doctor(1) and /usr/share/doc/vdsotime/doctor.md).",
    );
    let mut counts: Vec<(Code, Severity, usize)> = Vec::new();
    for f in &v.findings {
        match counts
            .iter_mut()
            .find(|(c, s, _)| *c == f.code && *s == f.severity)
        {
            Some(entry) => entry.2 += 1,
            None => counts.push((f.code, f.severity, 1)),
        }
    }
    for (code, severity, n) in counts {
        w.sample(
            "vdsotime_findings",
            &[("code", code.as_str()), ("severity", severity.as_str())],
            n as f64,
        );
    }
    w.out
}

/// Why the TSC was marked unstable: the kernel log's reason, else the boot parameter's
/// (the log's words for it), else `unknown` (inferred from available_clocksource).
fn tsc_unstable_reason(p: &Profile) -> &str {
    let f = &p.facts;
    match f.tsc_unstable_reason.as_deref() {
        Some(r) => r,
        None if f.boot_param("tsc") == Some("unstable") || f.boot_param("notsc").is_some() => {
            "boot parameter"
        }
        None => "unknown",
    }
}

/// Whether this run read no kernel log (it is read on x86 only, for the TSC).
fn kernel_log_unread(p: &Profile) -> bool {
    crate::doctor::classify::clocksources::is_x86(&p.facts.machine)
        && p.facts.tsc_marked_unstable.is_none()
}

/// `--metrics full`: each call's path, one-hot, and its cost through each route.
fn full(w: &mut Writer, paths: &[PathEntry]) {
    w.family(
        "vdsotime_call_path",
        "How each call is answered: 1 for its path, 0 for the others (vdso: in user space; vdso-fallback: the vDSO entered the kernel; no-vdso: no vDSO entry; syscall: the system call; rseq: glibc's rseq area).",
    );
    for e in paths {
        let clock = e.clock.as_deref().unwrap_or("");
        for k in PathKind::ALL {
            w.sample(
                "vdsotime_call_path",
                &[
                    ("function", &e.function),
                    ("clock", clock),
                    ("path", k.as_str()),
                ],
                bool_value(e.path == k),
            );
        }
    }
    w.family(
        "vdsotime_call_duration_seconds",
        "Seconds per call in the fastest trial, through vdsotime (via=vdsotime), the C library (via=libc) and the forced system call (via=syscall), to 4 significant digits.",
    );
    for e in paths {
        let clock = e.clock.as_deref().unwrap_or("");
        for (via, ns) in [
            ("vdsotime", e.vdso_ns),
            ("libc", e.libc_ns),
            ("syscall", e.syscall_ns),
        ] {
            if let Some(ns) = ns {
                w.sample(
                    "vdsotime_call_duration_seconds",
                    &[("function", &e.function), ("clock", clock), ("via", via)],
                    measured(ns * 1e-9),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(
            labels(&[("a", "x\"y\\z\nw"), ("b", "")]),
            "{a=\"x\\\"y\\\\z\\nw\",b=\"\"}"
        );
        assert_eq!(labels(&[]), "");
    }

    #[test]
    fn non_finite_values_are_left_out() {
        let mut w = Writer { out: String::new() };
        w.sample("m", &[], f64::NAN);
        w.sample("m", &[], 2.5e-8);
        assert_eq!(w.out, "m 0.000000025\n");
    }

    #[test]
    fn measured_values_keep_4_significant_digits() {
        assert_eq!(measured(7.564000000000001e-7), 7.564e-7);
        assert_eq!(measured(2.2557018096969227e-9), 2.256e-9);
        assert_eq!(
            format!("{}", measured(1.238817996792895e-7)),
            "0.0000001239"
        );
    }
}
