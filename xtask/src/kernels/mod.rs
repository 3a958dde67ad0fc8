//! `cargo xtask kernels`: the core's tests and the `vdsotime` tool on real Debian kernels of
//! every architecture, booted under qemu-system (TCG), each against its kernel's own vDSO.
//!
//! Steps, each timed: install what is missing (qemu-system from backports, the linkers of
//! `cross`), fetch the kernels (cached), then build every target's static binaries and boot
//! the machines at once (the first machines boot while the later targets build). Prints `<target> <kernel release> [scenario] PASS|FAIL|UNAVAILABLE: <reason>`
//! per boot, then the vDSO's symbols and versions and its speed-up over the syscall there,
//! and where the doctor ran, its verdict against the machine's own state.

mod aux_c;
pub(crate) mod boot;
mod build;
mod fetch;
mod initramfs;
pub(crate) mod json;
mod judge;
mod kernel;
mod machines;
mod payload;
mod prepare;
mod report;
mod scenarios;
mod schedule;
mod show;
mod source;
mod table;
mod top;
mod unpack;
mod verdict;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use crate::repeat::Tally;
use crate::{apt, toolchain};
use machines::Machine;

/// How many targets build while the kernels download: a cold download took about as long
/// as the first two targets' builds (x86_64 and i686, which the first machines boot).
const WARM_UP_TARGETS: usize = 2;

pub const USAGE: &str = "\
usage: cargo xtask kernels [options]

Boots Debian kernels of each architecture (the release's and the newest Debian builds:
a `-newest` machine takes trixie-backports' kernel, or unstable's where the mirror does
not serve it, and says which) under qemu-system (TCG) with an initramfs of static test
binaries and an init of its own; inside, runs the core's test suite, `vdsotime check
--duration 2`, `vdsotime info`, `vdsotime bench --trials 3` and `vdsotime dump`, and
`vdsotime top` once with `--backend auto`, whose choice must be the machine's expected
one (fentry where the kernel attaches it, else the tracepoint, perf on 32-bit builds,
saying why), then with each backend the tool has by name (fentry, refused with its reason
where the kernel cannot attach it; tracepoint; perf; the first two given a tracefs without
syscall tracepoints, as a kernel built without them has: they attach without them): a
process making exactly 2000 direct clock_gettime calls while it watches must be listed
with exactly 2000, and on x86_64 a 32-bit process too (none in the x86_64-aux kernel,
which has no system call tracepoints). x86_64 kernels boot again with clocksource=hpet, clocksource=acpi_pm, tsc=unstable and vdso=0,
and every x86_64 boot runs `vdsotime doctor --json` (the default boot also inside a time
namespace), whose verdict must match what the kernel itself says (its clocksource, a
seccomp probe, its log). The clocksource=hpet boot also runs `vdsotime top --once --format
json` while two processes read the time through the C library: each must be listed with
reason clocksource. x86_64-aux boots a kernel built from Debian's newest
`linux-source` (tinyconfig and xtask/kernel-config/x86_64-aux.config: auxiliary clocks on),
kept under ~/.cache/vdsotime/kernels (the first run builds it, while the other machines
boot), whose auxiliary clocks the tests enable and steer, through the Rust API, the C
library (a static musl program) and the preload (a glibc program under LD_PRELOAD).
Installs what is missing first (qemu-system from the release's backports, the linkers
`cargo xtask cross` uses); kernels are fetched through a private apt state directory and
cached under target/xtask-kernels/cache.

options:
  --target NAME    a machine (see --list) or a Rust target triple (repeatable); default: all
  --no-install     install nothing; what is missing makes its machine UNAVAILABLE
  --dump DIR       write each machine's vDSO image to DIR/<arch>-linux-<release>.so
  --require-all    exit non-zero when a machine is UNAVAILABLE, not only on FAIL
  --optional NAME  with --require-all, accept that machine being UNAVAILABLE (repeatable)
  --skip NAME      skip tests matching NAME inside the machines (repeatable)
  --timeout SECS   limit for each test binary inside a machine (default 600)
  --jobs N         machines booted at once (default 1)
  --doctor-table FILE
                   write the doctor verdicts as a Markdown table between FILE's
                   <!-- scenarios:begin --> and <!-- scenarios:end --> lines
  --scenario NAME  only the boots of that name (default, hpet, acpi_pm, tsc-unstable,
                   vdso-off, top-overhead; repeatable; see --list's boots); the machines
                   without it are left out, e.g. --target x86_64-trixie --scenario hpet.
                   top-overhead boots only when named: the `top_overhead` benchmark
                   (docs/top.md, Overhead) on x86_64, fentry's backend among its
                   watchers, its tables printed (under TCG: the ratios only indicate)
  --repeat N       boot the chosen machines N times (to find races and flaky tests): each
                   run's report, then per boot its PASS count, times and each failure
  --list           print the machines (each with its kernel's suites, in order of
                   preference) and exit
";

#[derive(Debug)]
struct Options {
    machines: Vec<Machine>,
    install: bool,
    dump_dir: Option<PathBuf>,
    require_all: bool,
    /// Machines whose UNAVAILABLE `--require-all` accepts.
    optional: Vec<String>,
    skip: Vec<String>,
    per_binary: Duration,
    jobs: usize,
    doctor_table: Option<PathBuf>,
    repeat: u32,
}

fn parse(args: &[String]) -> Result<Option<Options>, String> {
    let mut o = Options {
        machines: Vec::new(),
        install: true,
        dump_dir: None,
        require_all: false,
        optional: Vec::new(),
        skip: Vec::new(),
        // s390x's getrandom_parity (a 2 GiB request through the vDSO and the system call)
        // took 210-347 s under TCG on a 2-core machine shared with other work.
        per_binary: Duration::from_secs(600),
        jobs: 1,
        doctor_table: None,
        repeat: 1,
    };
    let mut scenarios: Vec<String> = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().cloned().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--target" => {
                let name = value("--target")?;
                let found = machines::select(&name);
                if found.is_empty() {
                    return Err(format!("no machine {name} (--list)"));
                }
                o.machines.extend(found);
            }
            "--no-install" => o.install = false,
            "--dump" => {
                let dir = PathBuf::from(value("--dump")?);
                fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
                o.dump_dir = Some(dir);
            }
            "--require-all" => o.require_all = true,
            "--doctor-table" => o.doctor_table = Some(PathBuf::from(value("--doctor-table")?)),
            "--optional" => o.optional.push(value("--optional")?),
            "--skip" => o.skip.push(value("--skip")?),
            "--scenario" => scenarios.push(value("--scenario")?),
            "--repeat" => {
                let v = value("--repeat")?;
                o.repeat = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("bad --repeat {v}"))?;
            }
            "--timeout" | "--jobs" => {
                let v = value(arg)?;
                let n: u64 = v.parse().map_err(|_| format!("bad {arg} {v}"))?;
                if arg == "--jobs" {
                    o.jobs = usize::try_from(n.max(1)).unwrap_or(1);
                } else {
                    o.per_binary = Duration::from_secs(n);
                }
            }
            "--list" => {
                let codename = apt::codename().unwrap_or_else(|| "<release>".to_string());
                for m in machines::ALL {
                    let boots: Vec<&str> = m.scenarios.iter().map(|s| s.name).collect();
                    let package = match m.source_config {
                        Some(_) => format!(
                            "{} (built: tinyconfig + {}.config)",
                            m.kernel_package, m.name
                        ),
                        None => m.kernel_package.to_string(),
                    };
                    println!(
                        "{:26} {:32} {} {} from {} on {}; boots: {}",
                        m.name,
                        m.triple,
                        m.deb_arch,
                        package,
                        m.suites_text(&codename),
                        m.qemu,
                        boots.join(" ")
                    );
                }
                return Ok(None);
            }
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(None);
            }
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    if o.machines.is_empty() {
        o.machines = machines::ALL.to_vec();
    }
    if scenarios.is_empty() {
        // Every boot that tests; a benchmark's only when named.
        scenarios = o
            .machines
            .iter()
            .flat_map(|m| m.scenarios.iter().filter(|s| !s.overhead))
            .map(|s| s.name.to_string())
            .collect();
    }
    o.machines = only_scenarios(o.machines, &scenarios)?;
    Ok(Some(o))
}

/// `machines` with only the boots named in `names`; those left with none are dropped.
fn only_scenarios(machines: Vec<Machine>, names: &[String]) -> Result<Vec<Machine>, String> {
    for n in names {
        if !machines
            .iter()
            .any(|m| m.scenarios.iter().any(|s| s.name == n))
        {
            return Err(format!("no chosen machine boots a scenario {n} (--list)"));
        }
    }
    let mut kept = Vec::new();
    for mut m in machines {
        let chosen: Vec<_> = m
            .scenarios
            .iter()
            .filter(|s| names.contains(&s.name.to_string()))
            .copied()
            .collect();
        if !chosen.is_empty() {
            // A machine's boots are a static list; this one lives as long as the command.
            m.scenarios = Box::leak(chosen.into_boxed_slice());
            kept.push(m);
        }
    }
    Ok(kept)
}

/// Whether `command --version` runs.
fn runs(command: &str) -> bool {
    Command::new(command)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Installs the missing emulators (from backports, with its firmware), linkers and
/// kernel build tools (for a machine whose kernel is built from source); the
/// error is why, for the UNAVAILABLE lines.
fn install(chosen: &[Machine], log: &Path) -> Option<String> {
    let mut qemu: Vec<String> = Vec::new();
    for m in chosen {
        if !runs(m.qemu) && !qemu.iter().any(|p| p == m.qemu_package) {
            qemu.push(m.qemu_package.to_string());
        }
    }
    let targets: Vec<_> = chosen.iter().filter_map(Machine::target).collect();
    let mut linking = toolchain::missing_packages(&targets);
    if chosen.iter().any(|m| m.source_config.is_some()) {
        let missing = source::BUILD_DEPENDS
            .iter()
            .chain(aux_c::PACKAGES)
            .filter(|p| !apt::is_installed(p));
        linking.extend(missing.map(|p| p.to_string()));
    }
    if qemu.is_empty() && linking.is_empty() {
        return None;
    }
    let codename = apt::codename()?;
    let backports = match apt::ensure_backports(&codename) {
        Ok(suite) => Some(suite),
        Err(e) => {
            println!("kernels: backports: {e}; qemu-system from {codename}");
            None
        }
    };
    apt::update(log);
    let mut err = None;
    if !linking.is_empty() {
        err = apt::install(&linking, log).err();
    }
    if !qemu.is_empty() {
        if let Err(e) = apt::install_from(backports.as_deref(), &qemu, log) {
            err.get_or_insert(e);
        }
    }
    err
}

/// Runs `f`, printing how long it took.
fn step<T>(name: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    println!("kernels: step {name}: {} s", start.elapsed().as_secs());
    out
}

/// Entry point of `cargo xtask kernels`.
pub fn main(args: &[String]) -> ExitCode {
    let opts = match parse(args) {
        Ok(Some(o)) => o,
        Ok(None) => return ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask kernels: {e}");
            return ExitCode::from(2);
        }
    };
    crate::cost::announce(&crate::cost::KERNELS);
    let started = Instant::now();
    let root = toolchain::workspace_root();
    let work = toolchain::target_dir().join("xtask-kernels");
    if let Err(e) = fs::create_dir_all(&work) {
        eprintln!("xtask kernels: {}: {e}", work.display());
        return ExitCode::from(2);
    }
    let install_err = if opts.install {
        step("install", || install(&opts.machines, &work.join("apt.log")))
    } else {
        None
    };
    let ctx = prepare::Context {
        root: &root,
        work: &work,
        install: opts.install,
        install_err: install_err.as_deref(),
        per_binary: opts.per_binary,
        skip: &opts.skip,
        dump_dir: opts.dump_dir.as_deref(),
    };
    let mut preparer = prepare::Preparer::new(&ctx);
    // Downloading leaves the cores idle: the first machines' targets build meanwhile.
    let kernels = std::thread::scope(|s| {
        let fetching = s.spawn(|| {
            step("fetch kernels", || {
                fetch::kernels(
                    &work.join("cache"),
                    &opts.machines,
                    &work.join("apt-kernels.log"),
                )
            })
        });
        preparer.warm_up(&opts.machines, WARM_UP_TARGETS);
        fetching.join()
    });
    let Ok(kernels) = kernels else {
        eprintln!("xtask kernels: fetching the kernels panicked");
        return ExitCode::FAILURE;
    };
    let mut tally = Tally::new("kernels");
    let mut booted = verdict::Booted::default();
    for round in 1..=opts.repeat {
        if opts.repeat > 1 {
            println!("kernels run {round}/{}:", opts.repeat);
        }
        let start = Instant::now();
        let (this, building) = step("build and boot", || {
            schedule::build_and_boot(
                &ctx,
                &mut preparer,
                &opts.machines,
                kernels.clone(),
                opts.jobs,
            )
        });
        println!(
            "kernels: building took {} s of that (the first machines booted meanwhile)",
            building.as_secs()
        );
        for l in &this.lines {
            let failed = (l.outcome != verdict::Outcome::Pass).then_some(l.why.as_str());
            tally.add(&format!("{} {}", l.machine, l.scenario), failed, l.elapsed);
        }
        tally.end_run(start.elapsed());
        booted.lines.extend(this.lines);
        // The doctor table shows the last run's verdicts.
        booted.rows = this.rows;
    }
    if opts.repeat > 1 {
        for line in tally.report() {
            println!("{line}");
        }
    }
    let (mut pass, mut fail, mut unavailable, mut required_missing) = (0, 0, 0, 0);
    for line in &booted.lines {
        match line.outcome {
            verdict::Outcome::Pass => pass += 1,
            verdict::Outcome::Fail => fail += 1,
            verdict::Outcome::Unavailable => {
                unavailable += 1;
                if !opts.optional.iter().any(|n| n == line.machine) {
                    required_missing += 1;
                }
            }
        }
    }
    if let Err(e) = table::write(&booted.rows, &work, opts.doctor_table.as_deref()) {
        eprintln!("xtask kernels: {e}");
        fail += 1;
    }
    println!(
        "kernels summary: {} lines: {pass} PASS, {fail} FAIL, {unavailable} UNAVAILABLE in {} s (logs in {})",
        booted.lines.len(),
        started.elapsed().as_secs(),
        work.display()
    );
    if fail > 0 || (opts.require_all && required_missing > 0) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    /// `--scenario` keeps only the named boots, and only machines that have them.
    #[test]
    fn scenarios_and_repeats() {
        let o = parse(&args(&[
            "--scenario",
            "hpet",
            "--scenario",
            "acpi_pm",
            "--repeat",
            "3",
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(o.repeat, 3);
        assert!(!o.machines.is_empty());
        for m in &o.machines {
            let names: Vec<&str> = m.scenarios.iter().map(|s| s.name).collect();
            assert_eq!(names, ["hpet", "acpi_pm"], "{}", m.name);
        }
        assert!(parse(&args(&["--scenario", "nonesuch"])).is_err());
        // The benchmark's boot only when named.
        let all = parse(&args(&[])).unwrap().unwrap();
        assert!(all
            .machines
            .iter()
            .all(|m| m.scenarios.iter().all(|s| !s.overhead)));
        assert!(all.machines.iter().any(|m| m.scenarios.len() == 5));
        let bench = parse(&args(&["--scenario", "top-overhead"]))
            .unwrap()
            .unwrap();
        assert!(!bench.machines.is_empty());
        for m in &bench.machines {
            assert_eq!(m.arch, "x86_64");
            assert!(
                m.scenarios.len() == 1 && m.scenarios[0].overhead,
                "{}",
                m.name
            );
        }
        assert!(parse(&args(&["--repeat", "0"])).is_err());
    }
}
