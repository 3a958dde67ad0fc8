//! One boot's verdict: boots a machine prepared by module `prepare` and tells what it
//! showed (module `schedule` runs them all).

use std::fmt::Write as _;
use std::fs;
use std::time::Duration;

use super::judge::{self, Expected, Judged, Truth};
use super::kernel::Unbootable;
use super::prepare::{Context, Ready};
use super::scenarios::TIMENS;
use super::{boot, payload, report, show, top};
use crate::runner::{self, Counts};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    Fail,
    Unavailable,
}

/// One line of the report: a machine in one scenario.
#[derive(Debug, Clone)]
pub struct Line {
    pub machine: &'static str,
    pub scenario: String,
    pub outcome: Outcome,
    /// Why it failed or was unavailable (empty on PASS).
    pub why: String,
    /// How long the machine ran.
    pub elapsed: Duration,
}

/// One row of the doctor table.
#[derive(Debug, Clone)]
pub struct Row {
    pub release: String,
    pub scenario: String,
    pub clocksource: String,
    pub exit: Option<i32>,
    pub judged: Judged,
}

/// What one boot gave.
#[derive(Debug, Default)]
pub struct Booted {
    pub lines: Vec<Line>,
    pub rows: Vec<Row>,
}

/// Boots one machine in one scenario; returns what it gave and the report to print.
pub fn one(ctx: &Context, r: &Ready) -> (Booted, String) {
    let m = &r.machine;
    let line = |scenario: &str, outcome, why: &str, elapsed| Line {
        machine: m.name,
        scenario: scenario.to_string(),
        outcome,
        why: why.trim().to_string(),
        elapsed,
    };
    let unbooted = |outcome, text: String| {
        let b = Booted {
            lines: vec![line(r.scenario.name, outcome, &text, Duration::ZERO)],
            rows: Vec::new(),
        };
        (b, text)
    };
    let kernel = match &r.kernel {
        Ok(k) => k,
        Err(Unbootable::Unavailable(why)) => {
            let text = format!("{} - UNAVAILABLE: {why} ({})\n", m.triple, m.name);
            return unbooted(Outcome::Unavailable, text);
        }
        Err(Unbootable::Failed(why)) => {
            let text = format!("{} - FAIL: {why} ({})\n", m.triple, m.name);
            return unbooted(Outcome::Fail, text);
        }
    };
    if !super::runs(m.qemu) {
        let why = ctx.install_err.unwrap_or("not installed (--no-install)");
        return unbooted(
            Outcome::Unavailable,
            format!(
                "{} {} UNAVAILABLE: {} missing: {why} ({})\n",
                m.triple, kernel.release, m.qemu, m.name
            ),
        );
    }
    let dir = ctx.work.join(m.name).join(r.scenario.name);
    let log = dir.join("console.log");
    let memory = if r.scenario.suite {
        boot::SUITE_MEMORY_MB
    } else {
        boot::LIGHT_MEMORY_MB
    };
    let cmd = boot::command(m, &kernel.image, &r.initrd, r.scenario.append, memory);
    let booted = boot::run(cmd, &log, r.budget);
    let console = report::parse(&fs::read_to_string(&log).unwrap_or_default());
    let release = console
        .release
        .clone()
        .unwrap_or_else(|| kernel.release.clone());
    let truth = console.run(payload::TRUTH).map(|t| Truth::parse(&t.lines));
    let truth_after = console
        .run(payload::TRUTH_AFTER)
        .map(|t| Truth::parse(&t.lines));

    let mut failures: Vec<String> = Vec::new();
    let mut counts = Counts::default();
    let mut times = Vec::new();
    let mut details = String::new();
    for run in &console.runs {
        times.push(format!("{} {:.1}s", run.label, run.millis as f64 / 1000.0));
        for l in run
            .lines
            .iter()
            .filter_map(|l| l.strip_prefix("test result: "))
        {
            runner::add_counts(&mut counts, l);
        }
        // A run whose exit status its own judge reads (the doctor's verdict; `top`
        // refusing a backend the kernel cannot give) fails the machine through that judge.
        let judged = [payload::DOCTOR, payload::DOCTOR_TIMENS].contains(&run.label.as_str())
            || top::count::is_label(&run.label);
        if run.verdict != "PASS" && !(judged && run.verdict == "FAIL") {
            let verdict = if run.verdict.is_empty() {
                "unfinished"
            } else {
                &run.verdict
            };
            failures.push(format!("{} {verdict}", run.label));
            let _ = writeln!(
                details,
                "  ---- {} {verdict} ({}) ----",
                run.label, run.status
            );
            for l in &run.lines {
                let _ = writeln!(details, "  | {l}");
            }
        }
    }
    if let Err(e) = &booted {
        failures.push(format!("machine: {e}"));
    } else if !console.done {
        failures.push("the init did not finish".to_string());
    }
    failures.extend(console.errors.iter().map(|e| format!("init: {e}")));
    if r.scenario.suite {
        let bits64 = !matches!(m.arch, "i686" | "arm");
        failures.extend(show::getrandom_failures(kernel.getrandom, bits64, &console));
    }

    // The doctor's verdicts, each a line of its own after the boot's.
    let mut judged: Vec<(String, Option<i32>, Judged)> = Vec::new();
    if r.scenario.doctor {
        let expected = truth
            .as_ref()
            .ok_or_else(|| "no reading of the machine".to_string())
            .and_then(Expected::from_truth);
        let mut judge_run = |label: &str, scenario: &str| {
            let run = console.run(label);
            let exit = run.and_then(|r| exit_code(&r.status));
            let j = match (&expected, run) {
                (Ok(want), Some(run)) => judge::doctor(
                    &run.lines,
                    exit,
                    want,
                    truth.as_ref().unwrap_or(&Truth::default()),
                    truth_after.as_ref(),
                ),
                (Err(e), _) => failed(e.clone()),
                (_, None) => failed(format!("{label} did not run")),
            };
            judged.push((scenario.to_string(), exit, j));
        };
        judge_run(payload::DOCTOR, r.scenario.name);
        if r.scenario.timens {
            judge_run(payload::DOCTOR_TIMENS, TIMENS);
        }
    }
    if let Some((_, _, j)) = judged.first() {
        failures.extend(j.failures.iter().map(|f| format!("doctor: {f}")));
    }
    let top = r.scenario.top.then(|| {
        let run = console.run(top::RUN.0);
        let exit = run.and_then(|r| exit_code(&r.status));
        top::judge(run.map_or(&[][..], |r| &r.lines), exit, truth.as_ref())
    });
    if let Some(Err(wrong)) = &top {
        failures.extend(wrong.iter().map(|f| format!("top: {f}")));
    }
    let counts_judged: Vec<Result<String, Vec<String>>> = if r.scenario.suite {
        let mut who = vec![top::count::Counted::Native];
        if top::count::compat_triple(m).is_some() {
            who.push(top::count::Counted::I386);
        }
        who.into_iter()
            .flat_map(|w| top::count::backends(m).iter().map(move |b| (w, *b)))
            .map(|(w, backend)| {
                let run = console.run(&top::count::label(backend, w));
                let exit = run.and_then(|r| exit_code(&r.status));
                let want = top::count::want(backend, m.arch, &release);
                let lines = run.map_or(&[][..], |r| &r.lines);
                top::count::judge(backend, want, w, lines, exit).map_err(|wrong| {
                    let what = top::count::label(backend, w);
                    wrong.into_iter().map(|f| format!("{what}: {f}")).collect()
                })
            })
            .collect()
    } else {
        Vec::new()
    };
    for wrong in counts_judged.iter().filter_map(|j| j.as_ref().err()) {
        failures.extend(wrong.iter().cloned());
    }
    let overhead = r.scenario.overhead.then(|| {
        let run = console.run(top::overhead::LABEL);
        let exit = run.and_then(|r| exit_code(&r.status));
        top::overhead::judge(run.map_or(&[][..], |r| &r.lines), exit, m.arch, &release)
    });
    if let Some(Err(wrong)) = &overhead {
        failures.extend(
            wrong
                .iter()
                .map(|f| format!("{}: {f}", top::overhead::LABEL)),
        );
    }

    let outcome = if failures.is_empty() {
        Outcome::Pass
    } else {
        Outcome::Fail
    };
    let secs = booted.as_ref().map_or(r.budget.as_secs(), |d| d.as_secs());
    let scenario = if m.scenarios.len() > 1 {
        format!(" {}", r.scenario.name)
    } else {
        String::new()
    };
    let mut stats = format!("{}, kernel from {}; ", m.name, kernel.origin());
    if r.scenario.suite {
        let _ = write!(
            stats,
            "{} passed, {} failed, {} ignored; ",
            counts.passed, counts.failed, counts.ignored
        );
    }
    let _ = write!(stats, "{memory} MB, {secs} s");
    let mut out = String::new();
    match outcome {
        Outcome::Pass => {
            let _ = writeln!(out, "{} {release}{scenario} PASS ({stats})", m.triple);
        }
        _ => {
            let _ = writeln!(
                out,
                "{} {release}{scenario} FAIL: {} ({stats})",
                m.triple,
                failures.join(", ")
            );
        }
    }
    if let Some(t) = &truth {
        let _ = writeln!(
            out,
            "  clocksource: {} (available: {}); clock_gettime under seccomp: {}; vDSO {}",
            t.current,
            t.available.join(" "),
            t.probe,
            if t.vdso { "mapped" } else { "absent" }
        );
        let _ = writeln!(out, "  kernel log: {}", t.choice().join(" | "));
    }
    let mut rows = Vec::new();
    let elapsed = Duration::from_secs(secs);
    let mut lines = vec![line(
        r.scenario.name,
        outcome,
        &failures.join(", "),
        elapsed,
    )];
    for (i, (name, exit, j)) in judged.into_iter().enumerate() {
        let _ = writeln!(
            out,
            "  doctor{}: {} {} (exit {exit:?}): {}",
            if name == TIMENS {
                " in a time namespace"
            } else {
                ""
            },
            j.status,
            j.code,
            j.sentence
        );
        if i > 0 {
            // The time-namespace scenario: a line of its own.
            let ok = j.failures.is_empty() && console.done;
            let verdict = if ok { "PASS" } else { "FAIL" };
            let why = if j.failures.is_empty() {
                String::new()
            } else {
                format!(": doctor: {}", j.failures.join(", "))
            };
            let _ = writeln!(
                out,
                "{} {release} {name} {verdict}{why} ({}; the default boot's doctor under unshare --time)",
                m.triple, m.name
            );
            let outcome = if ok { Outcome::Pass } else { Outcome::Fail };
            lines.push(line(&name, outcome, why.trim_start_matches(": "), elapsed));
        }
        rows.push(Row {
            release: release.clone(),
            scenario: name,
            clocksource: truth.as_ref().map_or(String::new(), |t| t.current.clone()),
            exit,
            judged: j,
        });
    }
    if let Some(Ok(said)) = &top {
        let _ = writeln!(out, "  {said}");
    }
    for said in counts_judged.iter().filter_map(|j| j.as_ref().ok()) {
        let _ = writeln!(out, "  {said}");
    }
    for table_line in overhead.iter().flat_map(|j| j.iter().flatten()) {
        let _ = writeln!(out, "  {table_line}");
    }
    if r.scenario.suite {
        show::describe(&mut out, &console);
        let _ = writeln!(
            out,
            "  {}",
            show::getrandom_summary(kernel.getrandom, &console)
        );
    }
    let _ = writeln!(
        out,
        "  kernel: {} ({}), {} CPUs, console log {}",
        kernel.package,
        m.qemu,
        console.cpus.as_deref().unwrap_or("?"),
        log.display()
    );
    let _ = writeln!(out, "  times: {}", times.join(", "));
    for skip in r.skips.iter().chain(show::skipped_inside(&console).iter()) {
        let _ = writeln!(out, "  {skip}");
    }
    out.push_str(&details);
    if r.scenario.suite {
        show::dump(
            ctx.root,
            ctx.work,
            ctx.dump_dir,
            m,
            &release,
            &console,
            &mut out,
        );
    }
    (Booted { lines, rows }, out)
}

/// A judgement that could not be made.
fn failed(why: String) -> Judged {
    Judged {
        failures: vec![why],
        ..Judged::default()
    }
}

/// `exit status: 2` → 2.
fn exit_code(status: &str) -> Option<i32> {
    status.strip_prefix("exit status: ")?.trim().parse().ok()
}
