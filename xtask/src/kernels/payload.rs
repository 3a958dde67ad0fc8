//! What a machine runs: the initramfs (init, test binaries stripped of debug info, the
//! `vdsotime` tool, the files the tests read) and the init's plan, with the time budget.
//!
//! The budget: every test binary gets `--timeout` seconds, and the tests named in [`HEAVY`]
//! are skipped inside the machines, visibly (a `SKIP` line with the reason): each takes
//! minutes under TCG and runs natively and under QEMU user mode in CI anyway. What is left
//! takes 50-90 s per machine under TCG (the stress test and the benchmark most of it).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::build::Built;
use super::initramfs::Archive;

/// Tests skipped inside the machines, and why.
pub const HEAVY: &[&str] = &[
    "every_single_byte_mutation",
    "random_mutations",
    "every_truncation_of_the_real_images",
    "random_garbage_is_rejected",
];
const HEAVY_WHY: &str = "parser-only bulk tests (3 and 2 min for mutation and badinput on \
    aarch64 under TCG); they read bytes, not the kernel, run natively and in `cargo xtask \
    cross`, and each kernel's vDSO image joins tests/fixtures/kernels";

/// What the plan runs besides the test binaries: (label, timeout, arguments of `vdsotime`).
const TOOL_RUNS: &[(&str, u64, &[&str])] = &[
    ("check", 120, &["check", "--duration", "2"]),
    ("info", 60, &["info"]),
    (
        "bench",
        300,
        &["bench", "--trials", "3", "--first-call-runs", "5"],
    ),
    ("dump", 60, &["dump", "-o", "/tmp/vdso.so"]),
];

/// Whether `label` is one of the tool's runs rather than a test binary.
pub fn is_tool_run(label: &str) -> bool {
    TOOL_RUNS.iter().any(|(l, _, _)| *l == label)
}

/// Where the image dumped inside is read back from.
pub const DUMP_LABEL: &str = "vdso";

/// The plan and the archive for one machine.
pub struct Payload {
    pub initramfs: Vec<u8>,
    /// Lines to print before the run: the SKIPs this plan makes.
    pub skips: Vec<String>,
    /// The sum of every program's timeout: the machine's own limit adds boot time to it.
    pub budget: Duration,
}

/// Builds the payload; `emulator` names the machine for the tests (`VDSOTIME_EMULATOR`),
/// `root` is the workspace, whose fixture paths the tests have compiled in.
pub fn assemble(
    built: &Built,
    root: &Path,
    emulator: &str,
    per_binary: Duration,
    extra_skips: &[String],
    objcopy: &Path,
) -> Result<Payload, String> {
    let mut a = Archive::default();
    for dir in ["/bin", "/dev", "/proc", "/sys", "/tmp", "/tests"] {
        a.dir(dir);
    }
    a.char_device("/dev/console", 5, 1);
    a.file("/init", 0o755, &stripped(&built.init, objcopy)?);
    a.symlink("/bin/true", "/init");
    a.symlink("/bin/sleep", "/init");
    a.symlink("/bin/unshare", "/init");
    a.file("/bin/vdsotime", 0o755, &stripped(&built.cli, objcopy)?);
    for dir in [
        "crates/vdsotime/tests/fixtures",
        "crates/vdsotime/tests/fixtures/kernels",
        "fuzz/regressions",
    ] {
        copy_dir(&mut a, &root.join(dir))?;
    }

    let mut plan = String::new();
    for (key, value) in [
        ("PATH", "/bin"),
        ("HOME", "/tmp"),
        ("TMPDIR", "/tmp"),
        ("RUST_BACKTRACE", "1"),
        ("VDSOTIME_EMULATOR", emulator),
    ] {
        plan.push_str(&format!("env\t{key}\t{value}\n"));
    }
    let mut skip_args = String::new();
    let mut skips = Vec::new();
    for name in HEAVY {
        skip_args.push_str(&format!("\t--skip\t{name}"));
    }
    skips.push(format!("SKIP {}: {HEAVY_WHY}", HEAVY.join(", ")));
    for name in extra_skips {
        skip_args.push_str(&format!("\t--skip\t{name}"));
        skips.push(format!("SKIP {name}: --skip"));
    }
    let mut budget = Duration::ZERO;
    for (label, exe) in &built.tests {
        let path = format!("/tests/{label}");
        a.file(&path, 0o755, &stripped(exe, objcopy)?);
        plan.push_str(&format!(
            "run\t{label}\t{}\ttests\t{path}\t--nocapture{skip_args}\n",
            per_binary.as_secs()
        ));
        budget += per_binary;
    }
    for (label, timeout, args) in TOOL_RUNS {
        plan.push_str(&format!(
            "run\t{label}\t{timeout}\tshow\t/bin/vdsotime\t{}\n",
            args.join("\t")
        ));
        budget += Duration::from_secs(*timeout);
    }
    plan.push_str(&format!("hex\t{DUMP_LABEL}\t/tmp/vdso.so\n"));
    a.file("/plan", 0o644, plan.as_bytes());
    Ok(Payload {
        initramfs: a.finish(),
        skips,
        budget,
    })
}

/// Every file of a host directory, at the same absolute path inside.
fn copy_dir(a: &mut Archive, dir: &Path) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    for file in files {
        a.copy(&file.to_string_lossy(), &file, 0o644)?;
    }
    Ok(())
}

/// The executable without its debug information (a quarter of the size or less).
fn stripped(exe: &Path, objcopy: &Path) -> Result<Vec<u8>, String> {
    let out =
        std::env::temp_dir().join(format!("vdsotime-kernels-{}.stripped", std::process::id()));
    let status = Command::new(objcopy)
        .arg("--strip-debug")
        .arg(exe)
        .arg(&out)
        .status()
        .map_err(|e| format!("{}: {e}", objcopy.display()))?;
    if !status.success() {
        return Err(format!(
            "{} --strip-debug {} failed",
            objcopy.display(),
            exe.display()
        ));
    }
    let bytes = std::fs::read(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let _ = std::fs::remove_file(&out);
    Ok(bytes)
}
