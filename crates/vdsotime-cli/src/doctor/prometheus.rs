//! `doctor --format prometheus`: the verdict as node_exporter textfile-collector
//! metrics (the Prometheus text exposition format), so a fleet can alert on a machine
//! whose clocks went slow. Base units (seconds), `_info` gauges for text, one enum-style
//! gauge per call for its path.

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

/// The metrics of one doctor run; `now` is the run's time, in seconds since the epoch.
pub fn render(p: &Profile, v: &Verdict, paths: &[PathEntry], now: f64) -> String {
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
        "When the doctor ran, in seconds since the Unix epoch.",
    );
    w.sample("vdsotime_doctor_last_run_timestamp_seconds", &[], now);
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
        "Seconds per call in the fastest trial, through vdsotime (via=vdsotime), the C library (via=libc) and the forced system call (via=syscall).",
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
                    ns * 1e-9,
                );
            }
        }
    }
    w.family(
        "vdsotime_findings",
        "Findings of the doctor by code and severity (the codes are listed in the doctor's documentation).",
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
}
