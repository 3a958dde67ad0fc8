//! `cargo xtask bpf`: compiles `vdsotime top`'s BPF counter
//! (crates/vdsotime-cli/bpf/count.bpf.c) into the objects checked into the repository,
//! one per BPF byte order, which the tool embeds; `--check` compiles them into a
//! temporary directory and fails if a checked-in object differs.
//!
//! Reproducible: one clang (Debian's clang 14, installed here if missing, as root), fixed
//! flags, the project's own header and no system header, run from the source's directory
//! with that directory mapped to `.` in the debug information.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The clang whose output is checked in: its `--version` first line starts so.
const CLANG: &str = "Debian clang version 14.";
/// Debian's package that provides it.
const CLANG_PACKAGE: &str = "clang-14";
/// The source, relative to the BPF directory.
const SOURCE: &str = "count.bpf.c";
/// The BPF targets: little-endian (x86_64, aarch64, ...) and big-endian (s390x).
const TARGETS: [&str; 2] = ["bpfel", "bpfeb"];

/// The directory of the BPF source.
fn bpf_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/vdsotime-cli/bpf")
}

/// The object of `target` in `dir`.
pub fn object(dir: &Path, target: &str) -> PathBuf {
    dir.join(format!("count.{target}.o"))
}

/// `clang --version`'s first line, if clang runs.
fn clang_version(clang: &str) -> Option<String> {
    let out = Command::new(clang).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    Some(text.lines().next()?.to_string())
}

/// The clang to run: `clang-14` or `clang` if it is that version, installing Debian's
/// package as root when neither is.
fn find_clang() -> Result<String, String> {
    let fits = |c: &str| clang_version(c).is_some_and(|v| v.starts_with(CLANG));
    for c in ["clang-14", "clang"] {
        if fits(c) {
            return Ok(c.into());
        }
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        return Err(format!(
            "no {CLANG}x clang (Debian's {CLANG_PACKAGE}): install it as root \
             (apt-get install {CLANG_PACKAGE}) or run this as root"
        ));
    }
    let log = std::env::temp_dir().join("xtask-bpf-apt.log");
    crate::apt::update(&log);
    crate::apt::install(&[CLANG_PACKAGE.to_string()], &log)?;
    if fits("clang-14") {
        Ok("clang-14".into())
    } else {
        Err(format!(
            "{CLANG_PACKAGE} installed but clang-14 is not {CLANG}x (see {})",
            log.display()
        ))
    }
}

/// Compiles the source for every target into `out`.
fn compile(clang: &str, out: &Path) -> Result<(), String> {
    let dir = bpf_dir()
        .canonicalize()
        .map_err(|e| format!("{}: {e}", bpf_dir().display()))?;
    for target in TARGETS {
        let status = Command::new(clang)
            .current_dir(&dir)
            .args(["-target", target, "-O2", "-g", "-Wall", "-Werror"])
            .args(["-nostdinc", "-fno-ident"])
            .arg(format!("-fdebug-prefix-map={}=.", dir.display()))
            .args(["-c", SOURCE, "-o"])
            .arg(object(out, target))
            .status()
            .map_err(|e| format!("{clang}: {e}"))?;
        if !status.success() {
            return Err(format!(
                "{clang} -target {target} {SOURCE} failed ({status})"
            ));
        }
    }
    Ok(())
}

/// Rebuilds the objects in place, or with `--check` compares fresh ones with them.
fn run(check: bool) -> Result<(), String> {
    let clang = find_clang()?;
    println!(
        "bpf: {}",
        clang_version(&clang).unwrap_or_else(|| clang.clone())
    );
    if !check {
        compile(&clang, &bpf_dir())?;
        for target in TARGETS {
            println!("bpf: wrote {}", object(&bpf_dir(), target).display());
        }
        return Ok(());
    }
    let tmp = std::env::temp_dir().join(format!("xtask-bpf-{}", std::process::id()));
    fs::create_dir_all(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    let result = compile(&clang, &tmp).and_then(|()| {
        let mut stale = Vec::new();
        for target in TARGETS {
            let fresh = fs::read(object(&tmp, target)).map_err(|e| e.to_string())?;
            let kept = fs::read(object(&bpf_dir(), target)).unwrap_or_default();
            if fresh != kept {
                stale.push(object(&bpf_dir(), target).display().to_string());
            }
        }
        if stale.is_empty() {
            println!("bpf: the checked-in objects are what the source compiles to");
            Ok(())
        } else {
            Err(format!(
                "not what {SOURCE} compiles to: {} (run `cargo xtask bpf` and commit them)",
                stale.join(", ")
            ))
        }
    });
    let _ = fs::remove_dir_all(&tmp);
    result
}

/// `cargo xtask bpf [--check]`.
pub fn main(args: &[String]) -> ExitCode {
    let check = match args {
        [] => false,
        [a] if a == "--check" => true,
        [a] if a == "-h" || a == "--help" => {
            println!(
                "usage: cargo xtask bpf [--check]\n\nCompiles crates/vdsotime-cli/bpf/{SOURCE} \
                 with Debian's clang 14 (installed if missing, as root) into count.bpfel.o and \
                 count.bpfeb.o there.\n  --check  compile into a temporary directory and fail \
                 if a checked-in object differs"
            );
            return ExitCode::SUCCESS;
        }
        _ => {
            eprintln!("xtask bpf: unknown arguments {args:?} (try --help)");
            return ExitCode::from(2);
        }
    };
    match run(check) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask bpf: {e}");
            ExitCode::FAILURE
        }
    }
}
