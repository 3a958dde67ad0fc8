//! From kernels and targets to verdicts: builds each target once, writes each machine's
//! initramfs, boots the machines (`--jobs` at a time) and prints what each one showed.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use super::build::{self, Built};
use super::fetch::Kernel;
use super::machines::Machine;
use super::{boot, payload, report};
use crate::runner::{self, Counts};
use crate::toolchain;

/// What every machine shares.
#[derive(Debug)]
pub struct Context<'a> {
    pub root: &'a Path,
    pub work: &'a Path,
    pub install: bool,
    pub install_err: Option<&'a str>,
    pub per_binary: Duration,
    pub skip: &'a [String],
    pub dump_dir: Option<&'a Path>,
}

/// A machine ready to boot, or why it cannot be.
#[derive(Debug)]
pub struct Ready {
    machine: Machine,
    kernel: Result<Kernel, String>,
    initrd: PathBuf,
    budget: Duration,
    skips: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    Fail,
    Unavailable,
}

/// Boot time and the tools' runs on top of the tests' budget.
const MARGIN: Duration = Duration::from_secs(180);

/// Builds every target once and writes each machine's initramfs.
pub fn prepare_all(
    ctx: &Context,
    machines: &[Machine],
    kernels: Vec<Result<Kernel, String>>,
) -> Vec<Ready> {
    let mut builds: BTreeMap<&str, Result<Built, String>> = BTreeMap::new();
    let objcopy = toolchain::rust_tool("rust-objcopy");
    machines
        .iter()
        .zip(kernels)
        .map(|(m, kernel)| {
            let dir = ctx.work.join(m.name);
            let _ = fs::create_dir_all(&dir);
            let mut ready = Ready {
                machine: *m,
                kernel,
                initrd: dir.join("initramfs.cpio"),
                budget: Duration::ZERO,
                skips: Vec::new(),
            };
            if ready.kernel.is_err() {
                return ready;
            }
            let built = builds.entry(m.triple).or_insert_with(|| {
                let t = m.target().ok_or("no cross target")?;
                let logs = ctx.work.join("logs");
                let _ = fs::create_dir_all(&logs);
                let flags = toolchain::prepare(&t, ctx.install, ctx.install_err, &logs)?;
                println!("kernels: building for {}...", m.triple);
                build::build(
                    ctx.root,
                    &t,
                    &flags,
                    &logs.join(format!("{}.build.log", m.triple)),
                )
            });
            let written = built.as_ref().map_err(Clone::clone).and_then(|b| {
                let objcopy = objcopy.as_ref().map_err(Clone::clone)?;
                let emulator = format!("{} (TCG, system mode)", m.qemu);
                let p =
                    payload::assemble(b, ctx.root, &emulator, ctx.per_binary, ctx.skip, objcopy)?;
                fs::write(&ready.initrd, &p.initramfs)
                    .map_err(|e| format!("{}: {e}", ready.initrd.display()))?;
                Ok(p)
            });
            match written {
                Ok(p) => {
                    ready.budget = p.budget + MARGIN;
                    ready.skips = p.skips;
                }
                Err(e) => ready.kernel = Err(e),
            }
            ready
        })
        .collect()
}

/// Boots the machines, `jobs` at a time, printing each one's report as it ends.
pub fn boot_all(ctx: &Context, machines: Vec<Ready>, jobs: usize) -> Vec<Outcome> {
    let queue = Mutex::new(machines.into_iter().enumerate().collect::<Vec<_>>());
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                let next = || {
                    let mut q = queue.lock().ok()?;
                    (!q.is_empty()).then(|| q.remove(0))
                };
                while let Some((i, ready)) = next() {
                    let (outcome, text) = one(ctx, &ready);
                    print!("{text}");
                    if let Ok(mut r) = results.lock() {
                        r.push((i, outcome));
                    }
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_default();
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, o)| o).collect()
}

/// Boots one machine; returns its outcome and the report to print.
fn one(ctx: &Context, r: &Ready) -> (Outcome, String) {
    let m = &r.machine;
    let kernel = match &r.kernel {
        Ok(k) => k,
        Err(why) => {
            return (
                Outcome::Unavailable,
                format!("{} - UNAVAILABLE: {why} ({})\n", m.triple, m.name),
            )
        }
    };
    let mut out = String::new();
    if !super::runs(m.qemu) {
        let why = ctx.install_err.unwrap_or("not installed (--no-install)");
        let text = format!(
            "{} {} UNAVAILABLE: {} missing: {why} ({})\n",
            m.triple, kernel.release, m.qemu, m.name
        );
        return (Outcome::Unavailable, text);
    }
    let log = ctx.work.join(m.name).join("console.log");
    let booted = boot::run(boot::command(m, &kernel.image, &r.initrd), &log, r.budget);
    let console = report::parse(&fs::read_to_string(&log).unwrap_or_default());
    let release = console
        .release
        .clone()
        .unwrap_or_else(|| kernel.release.clone());

    let mut failures: Vec<String> = Vec::new();
    let mut counts = Counts::default();
    let mut times = Vec::new();
    let mut details = String::new();
    for run in &console.runs {
        times.push(format!("{} {:.1}s", run.label, run.millis as f64 / 1000.0));
        for line in &run.lines {
            if let Some(rest) = line.strip_prefix("test result: ") {
                runner::add_counts(&mut counts, rest);
            }
        }
        if run.verdict != "PASS" {
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
            for line in &run.lines {
                let _ = writeln!(details, "  | {line}");
            }
        }
    }
    if let Err(e) = &booted {
        failures.push(format!("machine: {e}"));
    } else if !console.done {
        failures.push("the init did not finish".to_string());
    }
    failures.extend(console.errors.iter().map(|e| format!("init: {e}")));
    let outcome = if failures.is_empty() {
        Outcome::Pass
    } else {
        Outcome::Fail
    };
    let secs = booted.as_ref().map_or(r.budget.as_secs(), |d| d.as_secs());
    let stats = format!(
        "{}; {} passed, {} failed, {} ignored; {secs} s",
        m.name, counts.passed, counts.failed, counts.ignored
    );
    match outcome {
        Outcome::Pass => {
            let _ = writeln!(out, "{} {release} PASS ({stats})", m.triple);
        }
        _ => {
            let _ = writeln!(
                out,
                "{} {release} FAIL: {} ({stats})",
                m.triple,
                failures.join(", ")
            );
        }
    }
    describe(&mut out, &console);
    let _ = writeln!(
        out,
        "  kernel: {} ({}), {} CPUs, console log {}",
        kernel.package,
        m.qemu,
        console.cpus.as_deref().unwrap_or("?"),
        log.display()
    );
    let _ = writeln!(out, "  times: {}", times.join(", "));
    for skip in r.skips.iter().chain(skipped_inside(&console).iter()) {
        let _ = writeln!(out, "  {skip}");
    }
    out.push_str(&details);
    dump(ctx, m, &release, &console, &mut out);
    (outcome, out)
}

/// The vDSO's symbols and hash tables (`vdsotime info`) and its speed-up (`bench`).
fn describe(out: &mut String, console: &report::Console) {
    if let Some(info) = console.run("info") {
        let syms: Vec<String> = report::symbols(&info.lines)
            .iter()
            .map(|(s, v)| format!("{s}@{v}"))
            .collect();
        let _ = writeln!(out, "  vDSO symbols: {}", syms.join(" "));
        if let Some(h) = info
            .lines
            .iter()
            .find(|l| l.trim_start().starts_with("hash tables:"))
        {
            let _ = writeln!(out, "  vDSO {}", h.trim());
        }
    }
    if let Some(bench) = console.run("bench") {
        let rows: Vec<String> = report::ratios(&bench.lines)
            .iter()
            .filter(|(_, _, path)| path != "syscall")
            .map(|(f, x, _)| format!("{f} {x}"))
            .collect();
        let _ = writeln!(out, "  vDSO vs syscall under TCG: {}", rows.join(", "));
    }
}

/// The SKIP lines the tests printed inside.
fn skipped_inside(console: &report::Console) -> Vec<String> {
    console
        .runs
        .iter()
        .filter(|r| r.verdict == "PASS" && !payload::is_tool_run(&r.label))
        .flat_map(|r| {
            r.lines
                .iter()
                .filter(|l| !l.starts_with("test result:"))
                .map(move |l| format!("{}: {}", r.label, l.trim()))
        })
        .collect()
}

/// Keeps the image `vdsotime dump` wrote inside, and says whether a fixture holds it.
fn dump(ctx: &Context, m: &Machine, release: &str, console: &report::Console, out: &mut String) {
    let name = format!("{}-linux-{release}.so", m.arch);
    let bytes = match console.files.get(payload::DUMP_LABEL) {
        Some(Ok(bytes)) => bytes,
        Some(Err(e)) => {
            let _ = writeln!(out, "  dump: lost on the console: {e}");
            return;
        }
        None => {
            let _ = writeln!(out, "  dump: none received");
            return;
        }
    };
    let kept = ctx.work.join(m.name).join(&name);
    let _ = fs::write(&kept, bytes);
    let fixture = ctx
        .root
        .join("crates/vdsotime/tests/fixtures/kernels")
        .join(&name);
    let same = fs::read(&fixture).is_ok_and(|f| &f == bytes);
    let note = if same {
        "identical to the fixture"
    } else {
        "not among the fixtures (--dump DIR stores it)"
    };
    let _ = writeln!(
        out,
        "  dump: {} ({} bytes): {note}",
        kept.display(),
        bytes.len()
    );
    if let Some(dir) = ctx.dump_dir {
        let to = dir.join(&name);
        match fs::write(&to, bytes) {
            Ok(()) => {
                let _ = writeln!(out, "  dump: written to {}", to.display());
            }
            Err(e) => {
                let _ = writeln!(out, "  dump: {}: {e}", to.display());
            }
        }
    }
}
