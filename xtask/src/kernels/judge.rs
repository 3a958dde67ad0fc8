//! Judging `vdsotime doctor --json` against what the machine itself says (`vm-truth`, see
//! xtask/vm-init/src/truth.rs), by the doctor's contract: exit status 0 healthy, 2
//! degraded; the root cause as the first finding, with a stable `code`.
//!
//! The truth decides what the verdict must be, never the scenario's name: no vDSO mapped
//! → `no_vdso`; the kernel log marked the TSC unstable and clock_gettime entered the kernel
//! → `tsc_marked_unstable`; clock_gettime entered the kernel → `clocksource_not_vdso_capable`
//! naming the current clocksource and a fix (another listed clocksource, the sysfs write,
//! the boot parameter); clock_gettime stayed in user space → healthy.
//!
//! The clocksources are judged as the doctor saw them when it looked: the kernel replaces
//! `tsc-early` by `tsc` seconds after boot (once it has refined the TSC's calibration),
//! so a reading taken before the doctor may list what the doctor no longer saw. The
//! doctor's own reading (`profile.facts` of its JSON) must be one the machine gave, before
//! or after the doctor ran ([`seen`]); its fix is judged against that reading.

use super::json::{self, Value};

/// What the machine said about its clocks.
#[derive(Debug, Default, Clone)]
pub struct Truth {
    pub current: String,
    pub available: Vec<String>,
    pub vdso: bool,
    /// `vdso`, `kernel` or `error ...`: the seccomp probe of clock_gettime(MONOTONIC).
    pub probe: String,
    pub klog: Vec<String>,
}

impl Truth {
    pub fn parse(lines: &[String]) -> Truth {
        let mut t = Truth::default();
        for line in lines {
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
            match key {
                "current_clocksource" => t.current = value.trim().to_string(),
                "available_clocksource" => {
                    t.available = value.split_whitespace().map(str::to_string).collect()
                }
                "vdso" => t.vdso = value != "absent",
                "clock_gettime" => t.probe = value.to_string(),
                "klog" => t.klog.push(value.to_string()),
                _ => {}
            }
        }
        t
    }

    /// The kernel log says it declared the TSC unstable (boot parameter or watchdog).
    pub fn tsc_unstable(&self) -> bool {
        self.klog.iter().any(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("marking") && l.contains("unstable") && l.contains("tsc")
        })
    }

    /// The log lines that say which clocksource the kernel chose, and why.
    pub fn choice(&self) -> Vec<&str> {
        const WHY: &[&str] = &[
            "switched to clocksource",
            "unstable",
            "refined tsc",
            "override",
            "calibration",
            "detected",
        ];
        self.klog
            .iter()
            .filter(|l| {
                let l = l.to_ascii_lowercase();
                WHY.iter().any(|w| l.contains(w))
            })
            .map(|l| strip_level(l))
            .collect()
    }
}

/// `<6>[    0.3] text` → `text`.
fn strip_level(line: &str) -> &str {
    let l = line.trim_start();
    let l = l
        .strip_prefix('<')
        .map_or(l, |r| r.split_once('>').map_or(r, |p| p.1));
    let l = l.trim_start();
    l.strip_prefix('[')
        .and_then(|r| r.split_once(']'))
        .map_or(l, |p| p.1.trim_start())
}

/// Clocksources the x86 vDSO cannot read (the kernel gives them no `vdso_clock_mode`).
const NOT_VDSO_CAPABLE: &[&str] = &["hpet", "acpi_pm", "jiffies", "refined-jiffies", "pit"];

/// `tsc`, which the kernel lists as `tsc-early` until it has refined the TSC's calibration.
const TSC: &str = "tsc";
const TSC_EARLY: &str = "tsc-early";

/// Whether `available` offers `cs`: listed, or `tsc` while `tsc-early` stands for it
/// (`echo tsc > .../current_clocksource` then takes effect when `tsc` registers).
fn offers(available: &[String], cs: &str) -> bool {
    available
        .iter()
        .any(|a| a == cs || (cs == TSC && a == TSC_EARLY))
}

/// The machine as the doctor saw it: `before` with the current and available clocksources
/// the doctor's JSON reports, which must be those the machine gave `before` or `after` the
/// doctor ran (an `Err` says what differed, or that the document has no reading).
pub fn seen(doc: &Value, before: &Truth, after: Option<&Truth>) -> Result<Truth, String> {
    let current = doc.at("profile.facts.clocksource").and_then(Value::as_str);
    let available = doc.at("profile.facts.clocksources_available");
    let (Some(current), Some(available)) = (current, available) else {
        return Err("the document has no profile.facts.clocksource(s_available)".to_string());
    };
    let available: Vec<String> = available
        .as_array()
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    let same = |t: &Truth| t.current == current && t.available == available;
    if !(same(before) || after.is_some_and(same)) {
        let after = after.map_or("no reading".to_string(), |t| {
            format!("{} {:?}", t.current, t.available)
        });
        return Err(format!(
            "the doctor read clocksource {current} {available:?}; the machine said {} {:?} \
             before it and {after} after it",
            before.current, before.available
        ));
    }
    Ok(Truth {
        current: current.to_string(),
        available,
        ..before.clone()
    })
}

/// What the doctor must say, from the truth.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    Healthy,
    NotVdsoCapable(String),
    TscUnstable(String),
    NoVdso,
}

impl Expected {
    pub fn from_truth(t: &Truth) -> Result<Expected, String> {
        if !t.vdso {
            return Ok(Expected::NoVdso);
        }
        match t.probe.as_str() {
            "vdso" => Ok(Expected::Healthy),
            "kernel" if t.tsc_unstable() => Ok(Expected::TscUnstable(t.current.clone())),
            "kernel" => Ok(Expected::NotVdsoCapable(t.current.clone())),
            other => Err(format!("the machine's own probe failed: {other}")),
        }
    }

    fn status(&self) -> &'static str {
        match self {
            Expected::Healthy => "healthy",
            _ => "degraded",
        }
    }

    fn code(&self) -> Option<&'static str> {
        match self {
            Expected::Healthy => None,
            Expected::NotVdsoCapable(_) => Some("clocksource_not_vdso_capable"),
            Expected::TscUnstable(_) => Some("tsc_marked_unstable"),
            Expected::NoVdso => Some("no_vdso"),
        }
    }
}

/// One row of the doctor table, and why the verdict is wrong, if it is.
#[derive(Debug, Default, Clone)]
pub struct Judged {
    pub failures: Vec<String>,
    pub status: String,
    pub code: String,
    pub vdso_ns: Option<f64>,
    pub syscall_ns: Option<f64>,
    pub sentence: String,
}

/// Judges one doctor run: its output lines and exit code, against `expected`; `before` and
/// `after` are the machine's readings taken before and after the doctor ran.
pub fn doctor(
    lines: &[String],
    exit: Option<i32>,
    expected: &Expected,
    before: &Truth,
    after: Option<&Truth>,
) -> Judged {
    let mut j = Judged::default();
    let doc = match json::document(lines) {
        Ok(d) => d,
        Err(e) => {
            j.failures.push(format!("doctor --json: {e}"));
            return j;
        }
    };
    if doc.at("schema_version").and_then(Value::as_f64) != Some(1.0) {
        j.failures.push("no schema_version 1".to_string());
    }
    let t = match seen(&doc, before, after) {
        Ok(t) => t,
        Err(e) => {
            j.failures.push(e);
            before.clone()
        }
    };
    j.status = doc.str_at("verdict.status").to_string();
    let findings = doc.at("verdict.findings").map_or(&[][..], Value::as_array);
    let first = findings.first();
    j.code = first.map_or("", |f| f.str_at("code")).to_string();
    let message = first.map_or("", |f| f.str_at("message"));
    j.sentence = first_sentence(message).to_string();
    if let Some(p) = doc.get("paths").map(Value::as_array).and_then(|ps| {
        ps.iter()
            .find(|p| p.str_at("function") == "clock_gettime" && p.str_at("clock") == "MONOTONIC")
    }) {
        j.vdso_ns = p.get("vdso_ns").and_then(Value::as_f64);
        j.syscall_ns = p.get("syscall_ns").and_then(Value::as_f64);
    }

    let want_exit = if expected.status() == "healthy" { 0 } else { 2 };
    if j.status != expected.status() {
        j.failures.push(format!(
            "verdict {:?}, truth says {}",
            j.status,
            expected.status()
        ));
    }
    if exit != Some(want_exit) {
        j.failures.push(format!(
            "exit status {exit:?}, the contract says {want_exit}"
        ));
    }
    let codes: Vec<&str> = findings.iter().map(|f| f.str_at("code")).collect();
    match expected.code() {
        Some(code) if j.code != code => j.failures.push(format!(
            "first finding {:?}, the root cause is {code}",
            j.code
        )),
        None => {
            for wrong in [
                "no_vdso",
                "clocksource_not_vdso_capable",
                "tsc_marked_unstable",
            ] {
                if codes.contains(&wrong) {
                    j.failures.push(format!("a healthy machine, yet {wrong}"));
                }
            }
        }
        _ => {}
    }
    if let Some(f) = first {
        j.failures.extend(root_cause(f, expected, &t));
    }
    if *expected == Expected::NoVdso {
        j.failures.extend(nothing_false(findings, &doc));
    }
    let mut seen = Vec::new();
    j.failures.retain(|f| {
        let new = !seen.contains(f);
        seen.push(f.clone());
        new
    });
    j
}

/// The first finding names the clocksource and a fix the machine offers.
fn root_cause(f: &Value, expected: &Expected, t: &Truth) -> Vec<String> {
    let mut out = Vec::new();
    let message = f.str_at("message");
    let named = |cs: &str| f.str_at("subject.clocksource") == cs || message.contains(cs);
    match expected {
        Expected::NotVdsoCapable(cs) => {
            if f.str_at("subject.clocksource") != cs {
                out.push(format!("subject.clocksource is not {cs}"));
            }
            match fix(f, t, cs) {
                Some(to) => {
                    for needle in [
                        "/sys/devices/system/clocksource/clocksource0/current_clocksource"
                            .to_string(),
                        format!("clocksource={to}"),
                    ] {
                        if !message.contains(&needle) {
                            out.push(format!("the fix does not say {needle}"));
                        }
                    }
                }
                None => out.push(format!(
                    "no fix naming a vDSO-capable clocksource from available_clocksource {:?}",
                    t.available
                )),
            }
        }
        Expected::TscUnstable(cs) if !named(cs) => {
            out.push(format!("the clocksource in use ({cs}) is not named"));
        }
        _ => {}
    }
    out
}

/// The clocksource the finding tells the operator to switch to: `fix.clocksource`, else the
/// first `clocksource=<name>` of the message naming another than the current one; it must
/// be offered ([`offers`]), differ from the current one, and be one the vDSO can read.
fn fix<'a>(f: &'a Value, t: &Truth, current: &str) -> Option<&'a str> {
    let from_field = f.at("fix.clocksource").and_then(Value::as_str);
    let message = f.str_at("message");
    // The boot parameter to switch to (the message may also quote the one in use).
    let from_text = message.split("clocksource=").skip(1).find_map(|rest| {
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .unwrap_or(rest.len());
        (&rest[..end] != current).then_some(&rest[..end])
    });
    let to = from_field.or(from_text)?;
    let ok = to != current && offers(&t.available, to) && !NOT_VDSO_CAPABLE.contains(&to);
    ok.then_some(to)
}

/// With no vDSO: no sentence that says otherwise, no "ok" finding under the degraded
/// verdict, no path measured through the vDSO.
fn nothing_false(findings: &[Value], doc: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for f in findings {
        let m = f.str_at("message");
        for false_claim in [
            "on this architecture",
            "served by the vDSO",
            "served by the vdso",
        ] {
            if m.contains(false_claim) {
                out.push(format!("{:?} says {false_claim:?}", f.str_at("code")));
            }
        }
        if f.str_at("severity") == "ok" {
            out.push(format!(
                "an ok finding under no vDSO: {:?}",
                f.str_at("code")
            ));
        }
    }
    let first = findings.first().map_or("", |f| f.str_at("message"));
    for cause in ["vdso=0", "valgrind"] {
        if !first.contains(cause) {
            out.push(format!("the no-vDSO finding does not name {cause}"));
        }
    }
    for p in doc.get("paths").map_or(&[][..], Value::as_array) {
        if p.str_at("path").starts_with("vdso") {
            out.push(format!(
                "{} {} said to go through the vDSO",
                p.str_at("function"),
                p.str_at("clock")
            ));
        }
    }
    out
}

/// Up to the first ". " (or the whole text).
fn first_sentence(text: &str) -> &str {
    let text = text.trim();
    text.find(". ").map_or(text, |i| &text[..=i])
}

#[cfg(test)]
mod tests;
