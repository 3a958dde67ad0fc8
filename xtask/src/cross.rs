//! `cargo xtask cross`: install what is missing, then run the core tests on every target.
//!
//! Prints one line per target (PASS, FAIL, or UNAVAILABLE with the reason) and a summary;
//! fails on any FAIL (and, with `--require-all`, on any UNAVAILABLE).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::cross_c::{self, CTarget};
use crate::cross_run::{run_all, Context, Job};
use crate::repeat::Tally;
use crate::targets::{self, Target};
use crate::{apt, binfmt, qemu, toolchain};

pub const USAGE: &str = "\
usage: cargo xtask cross [options] [-- <cargo test args>]

Runs `cargo test -p vdsotime --target T --no-fail-fast` for every supported target, natively
or under QEMU user mode, then the vDSO tests again without the `std` feature (auxv read
without getauxval); arguments after `--` replace both runs. Then the C library and the
preload (`cargo test -p vdsotime-c -p vdsotime-preload`) for i686 glibc, i686 musl and armv7
glibc, their C test programs built with that target's C library. Installs what is missing
first: Rust std via rustup, cross linkers, gcc-multilib and QEMU via apt (QEMU from the
release's backports), Debian's i386 musl unpacked under target/.

options:
  --target T       only this target (repeatable); default: all of them
  --no-install     install nothing; what is missing makes its target UNAVAILABLE
  --dump DIR       write each target's vDSO image to DIR/<arch>.so (VDSOTIME_DUMP_DIR)
  --require-all    exit non-zero when a target is UNAVAILABLE, not only on FAIL
  --skip NAME      pass `--skip NAME` to every test binary (repeatable)
  --timeout SECS   limit for running each cargo test pass of a target (default 300):
                   past it, a pass that does nothing for 30 s (no CPU used, no process
                   started or ended: hung) is stopped, one still computing (a slow
                   machine) at three times the limit; its build (`--no-run`, first) has
                   a limit of its own, 1800 s
  --repeat N       run the chosen targets N times (to find flaky tests and hangs): each
                   run's results, then per target its passes, timeouts, failures and
                   times; fails if any run failed. Logs of failed runs are kept as
                   failed/run<K>-<target>.log under the log directory
  --jobs N         targets run at once (default 1); their lines come in the order
                   they finish
  --list           print the targets and exit
";

/// Parsed command line.
#[derive(Debug)]
struct Options {
    targets: Vec<Target>,
    /// Targets of the C library and preload runs (module `cross_c`).
    c_targets: Vec<CTarget>,
    install: bool,
    dump_dir: Option<PathBuf>,
    require_all: bool,
    timeout: Duration,
    cargo_args: Vec<String>,
    skip: Vec<String>,
    repeat: u32,
    jobs: usize,
}

fn parse(args: &[String]) -> Result<Option<Options>, String> {
    let mut opts = Options {
        targets: Vec::new(),
        c_targets: Vec::new(),
        install: true,
        dump_dir: None,
        require_all: false,
        timeout: Duration::from_secs(300),
        cargo_args: Vec::new(),
        skip: Vec::new(),
        repeat: 1,
        jobs: 1,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match arg.as_str() {
            "--target" => {
                let t = value("--target")?;
                let (core, c) = (targets::find(&t), cross_c::find(&t));
                if core.is_none() && c.is_none() {
                    return Err(format!("unsupported target {t} (--list)"));
                }
                opts.targets.extend(core);
                opts.c_targets.extend(c);
            }
            "--no-install" => opts.install = false,
            "--dump" => {
                let dir = PathBuf::from(value("--dump")?);
                fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
                // Tests run with the package as working directory: pass an absolute path.
                opts.dump_dir = Some(fs::canonicalize(&dir).map_err(|e| e.to_string())?);
            }
            "--require-all" => opts.require_all = true,
            "--skip" => opts.skip.push(value("--skip")?),
            "--timeout" => {
                let secs = value("--timeout")?;
                let secs: u64 = secs.parse().map_err(|_| format!("bad --timeout {secs}"))?;
                opts.timeout = Duration::from_secs(secs);
            }
            "--repeat" => {
                let n = value("--repeat")?;
                opts.repeat = n
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| format!("bad --repeat {n}"))?;
            }
            "--jobs" => {
                let n = value("--jobs")?;
                opts.jobs = n
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| format!("bad --jobs {n}"))?;
            }
            "--list" => {
                for t in targets::ALL {
                    let how = t.qemu.map_or("native".to_string(), |q| format!("qemu-{q}"));
                    println!("{:32} {how}", t.triple);
                }
                for c in cross_c::ALL {
                    let how = c
                        .qemu()
                        .map_or("native".to_string(), |q| format!("qemu-{q}"));
                    println!("{:32} {how} (C library and preload)", c.triple);
                }
                return Ok(None);
            }
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(None);
            }
            "--" => {
                opts.cargo_args = it.cloned().collect();
                break;
            }
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    if opts.targets.is_empty() && opts.c_targets.is_empty() {
        opts.targets = targets::ALL.to_vec();
        opts.c_targets = cross_c::ALL.to_vec();
    }
    Ok(Some(opts))
}

/// Installs what the chosen targets lack; returns the errors by cause, for the reasons.
fn install_missing(
    chosen: &[Target],
    c_targets: &[CTarget],
    log: &Path,
) -> (Option<String>, Option<String>) {
    let mut linking = toolchain::missing_packages(chosen);
    for p in c_targets.iter().flat_map(CTarget::packages) {
        if !linking.iter().any(|l| l == p) && !apt::is_installed(p) {
            linking.push(p.to_string());
        }
    }
    let need_qemu = chosen
        .iter()
        .filter_map(|t| t.qemu)
        .chain(c_targets.iter().filter_map(CTarget::qemu))
        .any(|arch| qemu::find(arch).is_err());
    if linking.is_empty() && !need_qemu {
        return (None, None);
    }
    let mut qemu_pkg = String::from("qemu-user");
    let mut qemu_err = None;
    if need_qemu {
        match apt::codename() {
            Some(codename) => match apt::ensure_backports(&codename) {
                Ok(suite) => qemu_pkg = format!("qemu-user/{suite}"),
                Err(e) => qemu_err = Some(format!("backports: {e}")),
            },
            None => qemu_err = Some("no VERSION_CODENAME in /etc/os-release".to_string()),
        }
    }
    apt::update(log);
    let linking_err = if linking.is_empty() {
        None
    } else {
        apt::install(&linking, log).err()
    };
    if need_qemu && qemu_err.is_none() {
        qemu_err = apt::install(&[qemu_pkg], log).err();
    }
    (linking_err, qemu_err)
}

/// What a runnable target needs: its emulator (if any) and extra flags.
struct Prepared {
    emulator: Option<qemu::Emulator>,
    flags: Vec<String>,
}

/// Everything a target needs, or the reason it is UNAVAILABLE.
fn prepare(
    t: &Target,
    install: bool,
    errors: &(Option<String>, Option<String>),
    logs: &Path,
) -> Result<Prepared, String> {
    let flags = toolchain::prepare(t, install, errors.0.as_deref(), logs)?;
    let emulator = match t.qemu {
        None => None,
        Some(arch) => {
            let emulator = qemu::find(arch).map_err(|e| match &errors.1 {
                Some(install_err) => format!("{e}; install: {install_err}"),
                None => e,
            })?;
            // Not fatal: only tests that start their own binary again need it.
            if let Err(e) = binfmt::ensure(arch, &emulator.command) {
                println!("binfmt: {e}: tests that re-run their own binary will fail");
            }
            Some(emulator)
        }
    };
    Ok(Prepared { emulator, flags })
}

/// The `cargo test` runs for one target: the whole suite (every test binary, even after a
/// failure), then the vDSO tests once more without the `std` feature, whose auxv lookup
/// does not use libc's `getauxval` (prctl(PR_GET_AUXV), then /proc/self/auxv).
/// Arguments given after `--` replace both.
fn passes(cargo_args: &[String], skip: &[String]) -> Vec<Vec<String>> {
    let mut passes = if cargo_args.is_empty() {
        let args = |list: &[&str]| list.iter().map(|s| s.to_string()).collect();
        vec![
            args(&["--no-fail-fast"]),
            args(&["--no-default-features", "--test", "arch_vdso"]),
        ]
    } else {
        vec![cargo_args.to_vec()]
    };
    if !skip.is_empty() {
        for pass in &mut passes {
            if !pass.iter().any(|a| a == "--") {
                pass.push("--".to_string());
            }
            for name in skip {
                pass.extend(["--skip".to_string(), name.clone()]);
            }
        }
    }
    passes
}

/// Entry point of `cargo xtask cross`.
pub fn main(args: &[String]) -> ExitCode {
    let opts = match parse(args) {
        Ok(Some(opts)) => opts,
        Ok(None) => return ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask cross: {e}");
            return ExitCode::from(2);
        }
    };
    let root = toolchain::workspace_root();
    let logs = toolchain::target_dir().join("xtask-cross");
    if let Err(e) = fs::create_dir_all(&logs) {
        eprintln!("xtask cross: {}: {e}", logs.display());
        return ExitCode::from(2);
    }
    let errors = if opts.install {
        install_missing(&opts.targets, &opts.c_targets, &logs.join("apt.log"))
    } else {
        (None, None)
    };

    let mut jobs: Vec<(String, Result<Job, String>)> = Vec::new();
    for t in &opts.targets {
        let job = prepare(t, opts.install, &errors, &logs).map(|p| Job {
            packages: &["vdsotime"],
            target: *t,
            emulator: p.emulator,
            flags: p.flags,
            env: Vec::new(),
            passes: passes(&opts.cargo_args, &opts.skip),
            release: true,
        });
        jobs.push((t.triple.to_string(), job));
    }
    for c in &opts.c_targets {
        let job = cross_c::prepare(c, opts.install, &logs).map(|p| {
            let mut skip = opts.skip.clone();
            for (name, why) in &p.skips {
                println!("cross C {}: SKIP {name}: {why}", c.triple);
                skip.push(name.to_string());
            }
            // A target directory of their own: their dynamic-linking flags would otherwise
            // make cargo rebuild the core's static builds in place, and back.
            let mut env = p.env;
            let dir = logs.join("c-target");
            env.push(("CARGO_TARGET_DIR".to_string(), dir.display().to_string()));
            Job {
                packages: &["vdsotime-c", "vdsotime-preload"],
                target: c.target(),
                emulator: p.emulator,
                flags: p.flags,
                env,
                passes: passes(&["--no-fail-fast".to_string()], &skip),
                release: false,
            }
        });
        jobs.push((format!("C {}", c.triple), job));
    }

    let tally = Mutex::new(Tally::new("cross"));
    let mut failed = false;
    for round in 1..=opts.repeat {
        if opts.repeat > 1 {
            println!("cross run {round}/{}:", opts.repeat);
        }
        let cx = Context {
            root: &root,
            logs: &logs,
            dump_dir: opts.dump_dir.as_deref(),
            timeout: opts.timeout,
            parallel: opts.jobs,
            round,
            repeated: opts.repeat > 1,
        };
        let start = Instant::now();
        let (fail, unavailable) = run_all(&jobs, &cx, &tally);
        let mut t = tally.lock().unwrap_or_else(|e| e.into_inner());
        t.end_run(start.elapsed());
        failed |= fail > 0 || (opts.require_all && unavailable > 0);
    }
    if opts.repeat > 1 {
        let tally = tally.into_inner().unwrap_or_else(|e| e.into_inner());
        for line in tally.report() {
            println!("{line}");
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
