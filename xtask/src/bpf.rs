//! `cargo xtask bpf`: compiles `vdsotime top`'s BPF counters (crates/vdsotime-cli/bpf)
//! into the objects checked into the repository, which the tool embeds: the tracepoint
//! counter (sys_enter.bpf.c) and the fentry counter (fentry.bpf.c), each once per
//! architecture, as both read the task's saved registers (pt_regs.h), which differ. `--check` compiles them
//! into a temporary directory and fails if a checked-in object differs.
//!
//! Reproducible: one clang (Debian's clang 14, installed here if missing, as root), fixed
//! flags, the project's own headers and no system header (no generated vmlinux.h), run
//! from the source's directory with that directory mapped to `.` in the debug
//! information.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The clang whose output is checked in: its `--version` first line starts so.
const CLANG: &str = "Debian clang version 14.";
/// Debian's package that provides it.
const CLANG_PACKAGE: &str = "clang-14";
/// An object to build.
struct Object {
    /// Its source, in the BPF directory.
    source: &'static str,
    /// The BPF target: `bpfel` (x86_64, aarch64, ...) or `bpfeb` (s390x).
    target: &'static str,
    /// The architecture whose registers it reads (`__TARGET_ARCH_<arch>`).
    arch: &'static str,
    /// Its file name in the BPF directory.
    name: &'static str,
}

/// Every object the tool embeds.
const OBJECTS: [Object; 10] = [
    Object {
        source: "sys_enter.bpf.c",
        target: "bpfel",
        arch: "x86",
        name: "sys_enter.x86_64.o",
    },
    Object {
        source: "sys_enter.bpf.c",
        target: "bpfel",
        arch: "arm64",
        name: "sys_enter.aarch64.o",
    },
    Object {
        source: "sys_enter.bpf.c",
        target: "bpfeb",
        arch: "s390",
        name: "sys_enter.s390x.o",
    },
    Object {
        source: "sys_enter.bpf.c",
        target: "bpfel",
        arch: "riscv",
        name: "sys_enter.riscv64.o",
    },
    Object {
        source: "sys_enter.bpf.c",
        target: "bpfel",
        arch: "powerpc",
        name: "sys_enter.powerpc64le.o",
    },
    Object {
        source: "fentry.bpf.c",
        target: "bpfel",
        arch: "x86",
        name: "fentry.x86_64.o",
    },
    Object {
        source: "fentry.bpf.c",
        target: "bpfel",
        arch: "arm64",
        name: "fentry.aarch64.o",
    },
    Object {
        source: "fentry.bpf.c",
        target: "bpfeb",
        arch: "s390",
        name: "fentry.s390x.o",
    },
    Object {
        source: "fentry.bpf.c",
        target: "bpfel",
        arch: "riscv",
        name: "fentry.riscv64.o",
    },
    Object {
        source: "fentry.bpf.c",
        target: "bpfel",
        arch: "powerpc",
        name: "fentry.powerpc64le.o",
    },
];

/// The directory of the BPF source.
fn bpf_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/vdsotime-cli/bpf")
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

/// Compiles every object into `out`.
fn compile(clang: &str, out: &Path) -> Result<(), String> {
    let dir = bpf_dir()
        .canonicalize()
        .map_err(|e| format!("{}: {e}", bpf_dir().display()))?;
    for o in &OBJECTS {
        let status = Command::new(clang)
            .current_dir(&dir)
            .args(["-target", o.target, "-O2", "-g", "-Wall", "-Werror"])
            .args(["-nostdinc", "-fno-ident"])
            .arg(format!("-D__TARGET_ARCH_{}", o.arch))
            .arg(format!("-fdebug-prefix-map={}=.", dir.display()))
            .args(["-c", o.source, "-o"])
            .arg(out.join(o.name))
            .status()
            .map_err(|e| format!("{clang}: {e}"))?;
        if !status.success() {
            return Err(format!(
                "{clang} -target {} {} for {} failed ({status})",
                o.target, o.source, o.name
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
        for o in &OBJECTS {
            println!("bpf: wrote {}", bpf_dir().join(o.name).display());
        }
        return Ok(());
    }
    let tmp = std::env::temp_dir().join(format!("xtask-bpf-{}", std::process::id()));
    fs::create_dir_all(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    let result = compile(&clang, &tmp).and_then(|()| {
        let mut stale = Vec::new();
        for o in &OBJECTS {
            let fresh = fs::read(tmp.join(o.name)).map_err(|e| e.to_string())?;
            let kept = fs::read(bpf_dir().join(o.name)).unwrap_or_default();
            if fresh != kept {
                stale.push(bpf_dir().join(o.name).display().to_string());
            }
        }
        if stale.is_empty() {
            println!("bpf: the checked-in objects are what the source compiles to");
            Ok(())
        } else {
            Err(format!(
                "not what their source compiles to: {} (run `cargo xtask bpf` and commit them)",
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
                "usage: cargo xtask bpf [--check]\n\nCompiles crates/vdsotime-cli/bpf/sys_enter.bpf.c \
                 and fentry.bpf.c (per architecture) with Debian's clang 14 \
                 (installed if missing, as root) into {} there.\n  --check  compile into a \
                 temporary directory and fail if a checked-in object differs",
                OBJECTS.map(|o| o.name).join(", ")
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
