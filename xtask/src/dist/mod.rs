//! `cargo xtask dist`: every release artifact into `target/packages/`: the Debian packages
//! (amd64, and arm64 cross-built), the static tool tarballs (musl, x86_64 and aarch64) and
//! `SHA256SUMS`; lintian checks the packages. With `--test`, the packages are installed,
//! used and purged in fresh Debian 12 and 13 roots, and the static binaries run.
//!
//! The packaging rules live in debian/ (debhelper); this only orchestrates.

pub mod copyright;
mod debian;
mod fresh_root;
mod setup;
mod static_run;
mod stripped;
mod tarball;
mod version;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use crate::{source, toolchain};
use debian::{DebArch, AMD64, ARM64};
use fresh_root::Root;

const USAGE: &str = "usage: cargo xtask dist [--no-arm64] [--test]

Builds every release artifact into target/packages/ and prints each path:
  Debian packages (libvdsotime0, libvdsotime-dev, libvdsotime-preload, vdsotime) for amd64
  and arm64, checked by lintian (no error, no warning);
  vdsotime-<version>-<target>.tar.gz, the statically linked tool for x86_64 and aarch64
  (musl), with its man pages, completions, README, licenses and copyright notices;
  SOURCE: the commit built, and any uncommitted change the tree had (the tool's
  `vdsotime --version` says the same);
  SHA256SUMS over all of them.
Fails before building when debian/copyright does not list every linked crate
(cargo xtask copyright).
Installs what it needs from Debian (debhelper, lintian, mmdebstrap, clang, the arm64 cross
libc, QEMU) and Rust's std for each target.

  --no-arm64   amd64 packages and the x86_64 tarball only (no QEMU needed)
  --test       then install, use and purge the packages in fresh Debian 12 and 13 roots
               (mmdebstrap; arm64: Debian 12 under QEMU), and run the static binaries
  -h, --help   this text";

#[derive(Debug, Default)]
struct Options {
    no_arm64: bool,
    test: bool,
}

fn parse(args: &[String]) -> Result<Option<Options>, String> {
    let mut opts = Options::default();
    for arg in args {
        match arg.as_str() {
            "--no-arm64" => opts.no_arm64 = true,
            "--test" => opts.test = true,
            "-h" | "--help" => return Ok(None),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(Some(opts))
}

/// Runs `f`, printing how long it took under `what`.
pub fn timed<T>(what: &str, durations: &mut Vec<String>, f: impl FnOnce() -> T) -> T {
    println!("\n== {what}");
    let start = Instant::now();
    let out = f();
    let line = format!("{:6.1} s  {what}", start.elapsed().as_secs_f64());
    println!("{line}");
    durations.push(line);
    out
}

fn fresh_dir(dir: &Path) -> Result<(), String> {
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))
}

/// lintian over the packages: any error or warning fails (overrides live in the packages).
fn lintian(debs: &[PathBuf], log: &Path) -> Result<(), String> {
    let out = Command::new("lintian")
        .args(["--fail-on", "error,warning"])
        .args(debs)
        .output()
        .map_err(|e| format!("lintian: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let _ = fs::write(log, [out.stdout.as_slice(), out.stderr.as_slice()].concat());
    print!("{text}");
    if out.status.success() {
        println!("lintian: no error, no warning on {} packages", debs.len());
        Ok(())
    } else {
        Err(format!(
            "lintian found errors or warnings ({})",
            log.display()
        ))
    }
}

/// Builds the amd64 Debian packages (installing what that needs) into `out`: what
/// `cargo xtask fleet` installs when `cargo xtask dist` has not left them.
pub fn build_amd64(
    root: &Path,
    out: &Path,
    work: &Path,
    log: &Path,
) -> Result<Vec<PathBuf>, String> {
    setup::prepare(&[AMD64], &[], log)?;
    fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    move_into(
        debian::build(root, AMD64, &work.join("deb-amd64"), log)?,
        out,
    )
}

/// Moves the built packages into `out`, returning their new paths.
fn move_into(debs: Vec<PathBuf>, out: &Path) -> Result<Vec<PathBuf>, String> {
    let mut moved = Vec::new();
    for deb in debs {
        let to = out.join(deb.file_name().unwrap_or_default());
        fs::rename(&deb, &to).map_err(|e| format!("{}: {e}", deb.display()))?;
        moved.push(to);
    }
    Ok(moved)
}

fn run(opts: &Options, durations: &mut Vec<String>) -> Result<(), String> {
    crate::cost::announce(&crate::cost::DIST);
    let root = toolchain::workspace_root();
    let version = version::checked(&root)?;
    println!("version {version} (Cargo.toml and debian/changelog)");
    copyright::check(&root)?;
    let source = source::of(&root)?;
    println!("source: {}", source.label());
    if !source.changes.is_empty() {
        println!(
            "note: the artifacts are built from a tree with uncommitted changes; they say \
             so (vdsotime --version, target/packages/SOURCE)"
        );
    }
    // The tool's build script records it (vdsotime --version).
    std::env::set_var("VDSOTIME_SOURCE", source.label());
    let target_dir = toolchain::target_dir();
    let out = target_dir.join("packages");
    let work = target_dir.join("dist-work");
    let logs = work.join("logs");
    fresh_dir(&out)?;
    fresh_dir(&work)?;
    fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    let arches: Vec<DebArch> = if opts.no_arm64 {
        vec![AMD64]
    } else {
        vec![AMD64, ARM64]
    };
    let musl: Vec<&str> = tarball::TARGETS
        .iter()
        .copied()
        .filter(|t| !(opts.no_arm64 && t.starts_with("aarch64")))
        .collect();
    timed(
        "setup: Debian packages, QEMU, Rust targets",
        durations,
        || setup::prepare(&arches, &musl, &logs.join("setup.log")),
    )?;

    // The fresh roots are made while the packages build (downloads and dpkg, not cargo).
    let started = if opts.test {
        let mut roots = vec![
            Root {
                suite: "bookworm",
                arch: AMD64,
            },
            Root {
                suite: "trixie",
                arch: AMD64,
            },
        ];
        if !opts.no_arm64 {
            roots.push(Root {
                suite: "bookworm",
                arch: ARM64,
            });
        }
        Some(fresh_root::start(&roots, &work, &logs)?)
    } else {
        None
    };
    let mut artifacts = Vec::new();
    let mut by_arch = Vec::new();
    for arch in &arches {
        let debs = timed(
            &format!("Debian packages, {}", arch.name),
            durations,
            || {
                let log = logs.join(format!("dpkg-buildpackage-{}.log", arch.name));
                debian::build(&root, *arch, &work.join(format!("deb-{}", arch.name)), &log)
            },
        )?;
        let moved = move_into(debs, &out)?;
        artifacts.extend(moved.iter().cloned());
        by_arch.push((*arch, moved));
    }
    for target in &musl {
        let tarball = timed(&format!("static tool, {target}"), durations, || {
            let log = logs.join(format!("static-{target}.log"));
            tarball::build(&root, target, &version, &target_dir, &work, &out, &log)
        })?;
        artifacts.push(tarball);
    }
    let debs: Vec<PathBuf> = by_arch
        .iter()
        .flat_map(|(_, d)| d.iter().cloned())
        .collect();
    timed("lintian", durations, || {
        lintian(&debs, &logs.join("lintian.log"))
    })?;
    timed("the packaged preload stripped", durations, || {
        stripped::check(&debs, &work)
    })?;
    let source_file = out.join("SOURCE");
    fs::write(&source_file, source.report())
        .map_err(|e| format!("{}: {e}", source_file.display()))?;
    artifacts.push(source_file);
    let sums = tarball::checksums(&out, &artifacts, &logs.join("sha256sum.log"))?;
    artifacts.push(sums);
    println!("\nartifacts:");
    for a in &artifacts {
        println!("{}", a.display());
    }
    if let Some(started) = started {
        timed(
            "fresh roots: the tests (the roots were made during the builds)",
            durations,
            || fresh_root::finish(started, &root, &by_arch, &work),
        )?;
        timed("static binaries", durations, || {
            let log = logs.join("static-run.log");
            static_run::run(&out, &version, &source.label(), &musl, &work, &log)
        })?;
    }
    Ok(())
}

/// Runs a task's `run` with the options `parsed` (or prints `usage`: the error exit 64 for
/// bad arguments), then every phase's duration that `run` recorded with [`timed`].
pub fn timed_task<O, T>(
    task: &str,
    usage: &str,
    parsed: Result<Option<O>, String>,
    run: impl FnOnce(&O, &mut Vec<String>) -> T,
) -> Result<T, ExitCode> {
    let opts = match parsed {
        Ok(Some(o)) => o,
        Ok(None) => {
            println!("{usage}");
            return Err(ExitCode::SUCCESS);
        }
        Err(e) => {
            eprintln!("xtask {task}: {e}\n{usage}");
            return Err(ExitCode::from(64));
        }
    };
    let start = Instant::now();
    let mut durations = Vec::new();
    let result = run(&opts, &mut durations);
    println!("\n== durations");
    for d in &durations {
        println!("{d}");
    }
    println!("{:6.1} s  in all", start.elapsed().as_secs_f64());
    Ok(result)
}

pub fn main(args: &[String]) -> ExitCode {
    match timed_task("dist", USAGE, parse(args), run) {
        Err(code) => code,
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("xtask dist: {e}");
            ExitCode::FAILURE
        }
    }
}
