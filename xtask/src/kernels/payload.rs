//! What a machine runs: the initramfs (init, test binaries stripped of debug info, the
//! `vdsotime` tool, the files the tests read) and the init's plan, with the time budget.
//! A boot that does not run the test suite (see [`Scenario`]) gets only the init and the
//! tool: a few megabytes, so it boots with less memory.
//!
//! The budget: every test binary gets `--timeout` seconds, and the tests named in [`HEAVY`]
//! are skipped inside the machines, visibly (a `SKIP` line with the reason): each takes
//! minutes under TCG and runs natively (on every architecture's images) in CI anyway. So are the
//! bulk getrandom tests ([`SYSCALL_BULK`]) where the kernel's vDSO has no getrandom: there
//! they would only test the system call again, for minutes (s390x). [`TOO_SLOW_UNDER_TCG`]
//! names what one architecture's machines skip because TCG makes it take most of a
//! binary's limit there. What is left takes 30-90 s per machine under TCG, and up to 4 min
//! where the vDSO's getrandom is tested.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::aux_c::{self, AuxPrograms};
use super::build::Built;
use super::initramfs::Archive;
use super::scenarios::Scenario;

/// Tests skipped inside the machines, and why.
pub const HEAVY: &[&str] = &[
    "every_single_byte_mutation",
    "random_mutations",
    "every_truncation_of_the_real_images",
    "random_garbage_is_rejected",
];
const HEAVY_WHY: &str = "parser-only bulk tests (3 and 2 min for mutation and badinput on \
    aarch64 under TCG); they read bytes, not the kernel, run natively on every \
    architecture's images (and `cargo xtask cross` runs them on each architecture), and each \
    kernel's vDSO image joins tests/fixtures/kernels";

/// The bulk getrandom tests, skipped where the kernel's vDSO has no getrandom (and run,
/// like every getrandom test, where it has: see `show::getrandom_failures`).
pub const SYSCALL_BULK: &[&str] = &[
    "a_request_past_the_kernels_limit_is_cut_where_the_kernel_cuts",
    "no_repeated_block_and_uniform_bytes",
];
const SYSCALL_BULK_WHY: &str = "bulk getrandom tests (one 2 GiB request each way, 2 x 10^6 \
    draws: 4 and 2.5 min on s390x under TCG, where a system call costs about 50 us); this \
    kernel's vDSO has no getrandom, so both would test the system call, which they do \
    natively and in `cargo xtask cross`";

/// Tests skipped on one architecture's machines, with the reason: TCG makes them take
/// most of a test binary's limit there, so they would fail at random, and what they reach
/// runs on the other architectures' kernels. Keyed by [`Machine::arch`](super::machines::Machine).
pub const TOO_SLOW_UNDER_TCG: &[(&str, &[&str], &str)] = &[
    (
        "s390x",
        &["a_request_past_the_kernels_limit_is_cut_where_the_kernel_cuts"],
        "one 2 GiB getrandom request each way took 210-602 s on s390x under TCG (QEMU \
         emulates the vector instructions of s390x's ChaCha20 one at a time), against 600 s \
         for its whole binary; the cut at INT_MAX rounded down to a page is the vDSO's \
         generic code, which the ppc64le kernel runs, and the test runs natively",
    ),
    (
        "riscv64",
        &["a_request_past_the_kernels_limit_is_cut_where_the_kernel_cuts"],
        "one 2 GiB getrandom request each way took 479 s on riscv64's newest kernel under \
         TCG, against 600 s for its whole binary; the cut at INT_MAX rounded down to a page \
         is the vDSO's generic code, which the ppc64le kernel runs, and the test runs natively",
    ),
    (
        "x86_64",
        &[
            "a_request_past_the_kernels_limit_is_cut_where_the_kernel_cuts",
            "no_repeated_block_and_uniform_bytes",
            "truncated_tables_are_refused_inside_every_table",
            "a_mutated_image_never_panics_and_is_refused_by_both_readers_alike",
        ],
        "the 2 GiB getrandom request each way, the 2 x 10^6 draws and the first-call reader's \
         truncations and mutations took most of an x86_64 machine's 590-850 s under TCG; all \
         run natively on x86_64, the vDSO's getrandom on real hardware",
    ),
];

/// What the default boot runs after the test binaries: (label, timeout, arguments of
/// `vdsotime`).
const TOOL_RUNS: &[(&str, u64, &[&str])] = &[
    ("info", 60, &["info"]),
    (
        "bench",
        300,
        &["bench", "--trials", "3", "--first-call-runs", "5"],
    ),
    ("dump", 60, &["dump", "-o", "/tmp/vdso.so"]),
];

/// Every boot: `check` (a slow clock must still read the right time).
const CHECK: (&str, u64, &[&str]) = ("check", 120, &["check", "--duration", "2"]);

/// The labels of the runs [`assemble`] adds besides the test binaries.
pub const TRUTH: &str = "truth";
/// The reading again once the doctors have run: the kernel may have changed its
/// clocksources meanwhile (`tsc-early` replaced by `tsc`); the judge takes the doctor's
/// own reading if it is one of the two.
pub const TRUTH_AFTER: &str = "truth-after";
pub const DOCTOR: &str = "doctor";
pub const DOCTOR_TIMENS: &str = "doctor-timens";
const DOCTOR_ARGS: &[&str] = &["doctor", "--json"];
const DOCTOR_TIMEOUT: u64 = 120;
/// The time namespace's offsets: a day on the monotonic and boot-time clocks.
const TIMENS_ARGS: &[&str] = &[
    "--time",
    "--fork",
    "--monotonic",
    "86400",
    "--boottime",
    "86400",
];

/// On a kernel built with the auxiliary clocks (the boot that carries their C programs), the
/// default boot enables auxiliary clock 0 after the tests, so that `info` and `bench` show it, and
/// `doctor` must prove it served: a line of its text output must contain [`AUX_SERVED`]
/// (the init reports an error otherwise, which fails the machine).
const AUX_ENABLE: (&str, &[&str]) = (
    "aux-enable",
    &[
        "/bin/vm-write",
        "/sys/kernel/time/aux_clocks/0/aux_clock_enable",
        "1",
    ],
);
const DOCTOR_AUX: &str = "doctor-aux";
const AUX_SERVED: &str = "[aux_clocks_served] The enabled auxiliary clock AUX0 is answered in user space by the vDSO (proved under a seccomp filter";

/// Whether `label` is one of the tool's runs rather than a test binary.
pub fn is_tool_run(label: &str) -> bool {
    TOOL_RUNS.iter().any(|(l, _, _)| *l == label)
        || [
            CHECK.0,
            TRUTH,
            TRUTH_AFTER,
            DOCTOR,
            DOCTOR_TIMENS,
            AUX_ENABLE.0,
            DOCTOR_AUX,
            super::top::RUN.0,
        ]
        .contains(&label)
        || super::top::count::is_label(label)
        || label == super::top::overhead::LABEL
}

/// Where the image dumped inside is read back from.
pub const DUMP_LABEL: &str = "vdso";

/// The plan and the archive for one boot.
pub struct Payload {
    pub initramfs: Vec<u8>,
    /// Lines to print before the run: the SKIPs this plan makes.
    pub skips: Vec<String>,
    /// The sum of every program's timeout: the machine's own limit adds boot time to it.
    pub budget: Duration,
}

/// What differs between boots.
#[derive(Debug)]
pub struct Spec<'a> {
    pub scenario: &'a Scenario,
    /// Names the machine for the tests (`VDSOTIME_EMULATOR`).
    pub emulator: &'a str,
    /// The machine's architecture, for [`TOO_SLOW_UNDER_TCG`].
    pub arch: &'a str,
    pub per_binary: Duration,
    pub extra_skips: &'a [String],
    /// `VDSOTIME_REQUIRE` inside: what the tests must not skip for.
    pub require: &'a str,
    /// The kernel's vDSO has getrandom (its configuration says so).
    pub vdso_getrandom: bool,
    /// The kernel has the auxiliary clocks: the C API's and the preload's programs for
    /// them, run after the test binaries.
    pub aux_programs: Option<&'a AuxPrograms>,
    /// The backends `vdsotime top` counts exactly with in the default boot.
    pub top_counts: &'a [&'a str],
    /// The i686 build's init, run as the 32-bit process `top` must also count exactly
    /// (x86_64's Debian kernels).
    pub compat_init: Option<&'a Path>,
    /// The `top_overhead` benchmark built for the machine, where the boot runs it.
    pub overhead: Option<&'a Path>,
}

/// The tests a default boot skips, in groups with the reason each gets.
fn skipped(spec: &Spec) -> Vec<(Vec<String>, String)> {
    let names = |list: &[&str]| list.iter().map(|n| n.to_string()).collect::<Vec<String>>();
    let mut out = vec![(names(HEAVY), HEAVY_WHY.to_string())];
    if !spec.vdso_getrandom {
        out.push((names(SYSCALL_BULK), SYSCALL_BULK_WHY.to_string()));
    }
    for (_, tests, why) in TOO_SLOW_UNDER_TCG
        .iter()
        .filter(|(a, _, _)| *a == spec.arch)
    {
        // Tests already skipped above are not named twice.
        let left: Vec<&str> = tests
            .iter()
            .copied()
            .filter(|t| !out.iter().any(|(names, _)| names.iter().any(|n| n == t)))
            .collect();
        if !left.is_empty() {
            out.push((names(&left), why.to_string()));
        }
    }
    for name in spec.extra_skips {
        out.push((vec![name.clone()], "--skip".to_string()));
    }
    out
}

/// Builds the payload; `root` is the workspace, whose fixture paths the tests have
/// compiled in.
pub fn assemble(
    built: &Built,
    root: &Path,
    spec: &Spec,
    objcopy: &Path,
) -> Result<Payload, String> {
    let mut a = Archive::default();
    for dir in ["/bin", "/dev", "/proc", "/sys", "/tmp", "/tests"] {
        a.dir(dir);
    }
    a.char_device("/dev/console", 5, 1);
    a.file("/init", 0o755, &stripped(&built.init, objcopy)?);
    for applet in [
        "true",
        "sleep",
        "unshare",
        "env",
        "vm-truth",
        "vm-write",
        "vm-timeloop",
        "vm-top-watch",
        "vm-syscalls",
        "vm-top-count",
    ] {
        a.symlink(&format!("/bin/{applet}"), "/init");
    }
    a.file("/bin/vdsotime", 0o755, &stripped(&built.cli, objcopy)?);

    let mut plan = String::new();
    for (key, value) in [
        ("PATH", "/bin"),
        ("HOME", "/tmp"),
        ("TMPDIR", "/tmp"),
        ("RUST_BACKTRACE", "1"),
        ("VDSOTIME_EMULATOR", spec.emulator),
        ("VDSOTIME_REQUIRE", spec.require),
    ] {
        plan.push_str(&format!("env\t{key}\t{value}\n"));
    }
    let mut budget = Duration::ZERO;
    let mut run = |label: &str, timeout: u64, mode: &str, argv: &[&str]| {
        plan.push_str(&format!(
            "run\t{label}\t{timeout}\t{mode}\t{}\n",
            argv.join("\t")
        ));
        budget += Duration::from_secs(timeout);
    };
    fn tool<'a>(args: &[&'a str]) -> Vec<&'a str> {
        [&["/bin/vdsotime"], args].concat()
    }
    run(TRUTH, 30, "show", &["/bin/vm-truth"]);
    if spec.scenario.doctor {
        run(DOCTOR, DOCTOR_TIMEOUT, "show", &tool(DOCTOR_ARGS));
    }
    if spec.scenario.timens {
        let argv = [&["/bin/unshare"], TIMENS_ARGS, &tool(DOCTOR_ARGS)].concat();
        run(DOCTOR_TIMENS, DOCTOR_TIMEOUT, "show", &argv);
    }
    if spec.scenario.doctor {
        run(TRUTH_AFTER, 30, "show", &["/bin/vm-truth"]);
    }
    run(CHECK.0, CHECK.1, "show", &tool(CHECK.2));
    if spec.scenario.top {
        let (label, timeout, argv) = super::top::RUN;
        run(label, timeout, "show", argv);
    }
    if let Some(bench) = spec.overhead {
        use super::top::overhead;
        a.file(overhead::INSIDE, 0o755, &stripped(bench, objcopy)?);
        let (label, timeout, argv) = overhead::run();
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        run(label, timeout, "show", &argv);
    }
    if spec.scenario.suite {
        use super::top::count::{self, Counted};
        let mut counted = vec![Counted::Native];
        if let Some(init) = spec.compat_init {
            a.file(count::I386_PROGRAM, 0o755, &stripped(init, objcopy)?);
            counted.push(Counted::I386);
        }
        for who in counted {
            for backend in spec.top_counts {
                let (label, timeout, argv) = count::run(backend, who);
                let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
                run(&label, timeout, "show", &argv);
            }
        }
    }
    let mut skips = Vec::new();
    if spec.scenario.suite {
        for dir in [
            "crates/vdsotime/tests/fixtures",
            "crates/vdsotime/tests/fixtures/kernels",
            "fuzz/regressions",
        ] {
            copy_dir(&mut a, &root.join(dir))?;
        }
        let groups = skipped(spec);
        let mut skip_args: Vec<&str> = Vec::new();
        for (names, why) in &groups {
            for name in names {
                skip_args.extend(["--skip", name]);
            }
            skips.push(format!("SKIP {}: {why}", names.join(", ")));
        }
        for (label, exe) in &built.tests {
            let path = format!("/tests/{label}");
            a.file(&path, 0o755, &stripped(exe, objcopy)?);
            let argv = [&[path.as_str(), "--nocapture"], skip_args.as_slice()].concat();
            // The auxiliary clocks' test prints what it saw (the clock enabled, its
            // readings set and steered, which clocks were served in user space): kept
            // whole in the log, the proof that they were.
            let mode = if label == "aux_clocks" {
                "show"
            } else {
                "tests"
            };
            run(label, spec.per_binary.as_secs(), mode, &argv);
        }
        let aux = spec.aux_programs.is_some();
        if let Some(programs) = spec.aux_programs {
            add_aux_programs(&mut a, &mut run, programs, objcopy)?;
            run(AUX_ENABLE.0, 10, "show", AUX_ENABLE.1);
        }
        for (label, timeout, args) in TOOL_RUNS {
            run(label, *timeout, "show", &tool(args));
        }
        if aux {
            run(DOCTOR_AUX, DOCTOR_TIMEOUT, "show", &tool(&["doctor"]));
            plan.push_str(&format!("expect\t{DOCTOR_AUX}\t{AUX_SERVED}\n"));
        }
        plan.push_str(&format!("hex\t{DUMP_LABEL}\t/tmp/vdso.so\n"));
    }
    a.file("/plan", 0o644, plan.as_bytes());
    Ok(Payload {
        initramfs: a.finish(),
        skips,
        budget,
    })
}

/// The labels of the auxiliary clocks' C programs.
const AUX_C: &str = "aux_clocks_c";
const AUX_PRELOAD: &str = "aux_clocks_preload";

/// The C API's and the preload's auxiliary-clock programs, the preload and glibc's files
/// (see [`aux_c`]); their whole output kept in the log, the proof of what served them
/// (`VDSOTIME_PRELOAD_DEBUG=all`: the preload's table of what it binds).
fn add_aux_programs(
    a: &mut Archive,
    run: &mut impl FnMut(&str, u64, &str, &[&str]),
    p: &AuxPrograms,
    objcopy: &Path,
) -> Result<(), String> {
    const TIMEOUT: u64 = 120;
    for file in &p.runtime {
        a.copy(&file.to_string_lossy(), file, 0o755)?;
    }
    a.file(
        aux_c::PRELOAD_INSIDE,
        0o755,
        &stripped(&p.preload, objcopy)?,
    );
    let c_api = format!("/tests/{AUX_C}");
    a.file(&c_api, 0o755, &stripped(&p.c_api, objcopy)?);
    let via_preload = format!("/tests/{AUX_PRELOAD}");
    a.file(&via_preload, 0o755, &stripped(&p.via_preload, objcopy)?);
    run(AUX_C, TIMEOUT, "show", &[&c_api]);
    let preload = format!("LD_PRELOAD={}", aux_c::PRELOAD_INSIDE);
    let argv = [
        "/bin/env",
        &preload,
        "VDSOTIME_PRELOAD_DEBUG=all",
        &via_preload,
    ];
    run(AUX_PRELOAD, TIMEOUT, "show", &argv);
    Ok(())
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

/// The executable without its debug information and local symbols (a quarter of the size
/// or less; riscv64's local labels alone made its test binaries 8 MB each, the initramfs
/// 230 MB). Panic messages keep their file and line; backtraces name fewer frames.
fn stripped(exe: &Path, objcopy: &Path) -> Result<Vec<u8>, String> {
    let out =
        std::env::temp_dir().join(format!("vdsotime-kernels-{}.stripped", std::process::id()));
    let status = Command::new(objcopy)
        .args(["--strip-debug", "--discard-all"])
        .arg(exe)
        .arg(&out)
        .status()
        .map_err(|e| format!("{}: {e}", objcopy.display()))?;
    if !status.success() {
        return Err(format!(
            "{} --strip-debug --discard-all {} failed",
            objcopy.display(),
            exe.display()
        ));
    }
    let bytes = std::fs::read(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let _ = std::fs::remove_file(&out);
    Ok(bytes)
}

#[cfg(test)]
mod tests;
