//! `cargo xtask fleet`: the doctor on a real Debian 13 host. A trixie amd64 machine under
//! qemu-system-x86_64 (TCG) boots Debian's own kernel with systemd as PID 1, Debian's
//! node_exporter and Prometheus, and the project's Debian packages; inside it,
//! `systemctl enable --now vdsotime-doctor.timer`, then the checks of docs/testing.md
//! ("The fleet machine"), each a PASS or FAIL line, judged here from what the guest's
//! script (xtask/fleet/guest.sh) recorded.

mod alerts;
mod image;
mod judge;
mod root;
mod rules;
mod sandbox;
mod vm;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use crate::{apt, dist, toolchain};

const USAGE: &str = "usage: cargo xtask fleet [--debs DIR]

Boots a Debian 13 (trixie) amd64 machine under qemu-system-x86_64 (TCG) with Debian's
kernel, systemd as PID 1, node_exporter, Prometheus and the project's amd64 Debian
packages, enables vdsotime-doctor.timer in it and checks, each a PASS or FAIL line: the
service's runs from the timer, the metrics file's mode and owner, node_exporter and
Prometheus with the shipped rules, a clocksource switched while the machine runs (exactly
one alert, resolved by switching back), a boot with tsc=unstable (exactly one alert), the
unit's exposure score, its sandbox, and a missing textfile directory. Prints each phase's
duration and the figures docs/fleet.md quotes.

The root file system is cached under ~/.cache/vdsotime/fleet (made with mmdebstrap from
the mirror the machine's apt sources use, when missing). Installs what it needs from
Debian (mmdebstrap, qemu-system-x86, e2fsprogs).

  --debs DIR   the packages to install (default: target/packages, as `cargo xtask dist`
               leaves them; built with dpkg-buildpackage when none is there)
  -h, --help   this text";

/// The Debian packages the host needs, by the command that shows each is there.
const TOOLS: &[(&str, &str)] = &[
    ("mmdebstrap", "mmdebstrap"),
    ("qemu-system-x86_64", "qemu-system-x86"),
    ("mkfs.ext4", "e2fsprogs"),
];

/// How long a boot may run before it is stopped.
const MAIN_LIMIT: Duration = Duration::from_secs(1500);
const TSC_LIMIT: Duration = Duration::from_secs(900);

fn on_path(cmd: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(cmd).is_file()))
}

/// The amd64 packages in `dir`; when there are none, the tool's packages are built into it.
fn debs(dir: &Path, work: &Path, log: &Path) -> Result<Vec<PathBuf>, String> {
    let find = || -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.to_string_lossy().ends_with("_amd64.deb"))
            .collect();
        v.sort();
        v
    };
    let found = find();
    if !found.is_empty() {
        return Ok(found);
    }
    println!("no amd64 packages in {}: building them", dir.display());
    dist::build_amd64(&toolchain::workspace_root(), dir, work, log)
}

fn run(opts: &Options, durations: &mut Vec<String>) -> Result<judge::Checks, String> {
    crate::cost::announce(&crate::cost::FLEET);
    let repo = toolchain::workspace_root();
    let target = toolchain::target_dir();
    let work = target.join("fleet");
    if work.exists() {
        fs::remove_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    }
    let logs = work.join("logs");
    fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    dist::timed("setup: Debian packages", durations, || {
        let missing: Vec<String> = TOOLS
            .iter()
            .filter(|(cmd, _)| !on_path(cmd))
            .map(|(_, p)| p.to_string())
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let log = logs.join("setup.log");
        apt::update(&log);
        apt::install(&missing, &log)
    })?;
    let debs_dir = opts.debs.clone().unwrap_or_else(|| target.join("packages"));
    let debs = dist::timed("the project's amd64 packages", durations, || {
        debs(&debs_dir, &work, &logs.join("debs.log"))
    })?;
    for d in &debs {
        println!("package: {}", d.display());
    }
    let tar = dist::timed("root file system (cached)", durations, || {
        root::root(&logs.join("mmdebstrap.log"))
    })?;
    let rules_path = repo.join("crates/vdsotime-cli/fleet/vdsotime.rules.yml");
    let shipped =
        fs::read_to_string(&rules_path).map_err(|e| format!("{}: {e}", rules_path.display()))?;
    let short = rules::shortened(&shipped, image::FOR);
    for a in rules::alerts(&shipped) {
        println!(
            "rule {}: for {} s in the file, {} s in the machine",
            a.name,
            a.for_seconds,
            a.for_seconds.min(image::FOR)
        );
    }
    let disk = dist::timed(
        "disk image: packages installed, test files, mkfs.ext4",
        durations,
        || image::make(&tar, &debs, &repo, &short, &work, &logs.join("image.log")),
    )?;
    let share = work.join("share");
    let mut checks = judge::Checks::default();
    let boots = [
        ("main", "", MAIN_LIMIT),
        ("tsc-unstable", "tsc=unstable", TSC_LIMIT),
    ];
    // Both machines at once: each spends part of its run waiting on its timer and on
    // Prometheus, which the other's work fills (docs/testing.md has the durations).
    println!(
        "\n== boots: {} (TCG, at once)",
        boots.map(|(name, ..)| name).join(", ")
    );
    let started = std::time::Instant::now();
    let ran: Vec<Result<std::time::Duration, String>> = std::thread::scope(|s| {
        let running: Vec<_> = boots
            .iter()
            .map(|&(name, append, limit)| {
                let (disk, share) = (&disk, &share);
                let log = logs.join(format!("console-{name}.log"));
                s.spawn(move || vm::boot(disk, name, append, share, &log, limit))
            })
            .collect();
        running
            .into_iter()
            .map(|t| {
                t.join()
                    .unwrap_or_else(|_| Err("the boot's thread panicked".into()))
            })
            .collect()
    });
    for ((name, ..), ran) in boots.iter().zip(ran) {
        let log = logs.join(format!("console-{name}.log"));
        let line = match &ran {
            Ok(t) => format!("{:6.1} s  boot {name} (TCG)", t.as_secs_f64()),
            Err(_) => format!(
                "{:6.1} s  boot {name} (TCG, failed)",
                started.elapsed().as_secs_f64()
            ),
        };
        println!("{line}");
        durations.push(line);
        let dir = share.join(name);
        checks.check(
            &format!("{name} boot: the machine powered itself off"),
            ran.is_ok(),
            &match &ran {
                Ok(t) => format!("after {} s (console: {})", t.as_secs(), log.display()),
                Err(e) => format!("{e} (console: {})", log.display()),
            },
        );
        if *name == "main" {
            judge::main_boot(&dir, &disk.release, &shipped, &mut checks);
            judge::figures(&dir);
        } else {
            judge::tsc_boot(&dir, &disk.release, &shipped, &mut checks);
        }
    }
    let line = format!(
        "{:6.1} s  both boots, side by side",
        started.elapsed().as_secs_f64()
    );
    println!("{line}");
    durations.push(line);
    println!("\nthe guest's records: {}", share.display());
    Ok(checks)
}

#[derive(Debug, Default)]
struct Options {
    debs: Option<PathBuf>,
}

fn parse(args: &[String]) -> Result<Option<Options>, String> {
    let mut opts = Options::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--debs" => {
                opts.debs = Some(PathBuf::from(it.next().ok_or("--debs needs a directory")?))
            }
            "-h" | "--help" => return Ok(None),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(Some(opts))
}

pub fn main(args: &[String]) -> ExitCode {
    match dist::timed_task("fleet", USAGE, parse(args), run) {
        Err(code) => code,
        Ok(Ok(c)) if c.failed.is_empty() => {
            println!("\nfleet: {} passed, 0 failed", c.passed);
            ExitCode::SUCCESS
        }
        Ok(Ok(c)) => {
            println!("\nfailed: {}", c.failed.join("; "));
            println!("fleet: {} passed, {} failed", c.passed, c.failed.len());
            ExitCode::FAILURE
        }
        Ok(Err(e)) => {
            eprintln!("xtask fleet: {e}");
            ExitCode::FAILURE
        }
    }
}
