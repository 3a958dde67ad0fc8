//! Every example builds and runs as a user would build and run it, and what it prints
//! agrees with the kernel:
//!
//! - `quickstart` (src/main.rs, built by `cargo test` itself): its CLOCK_REALTIME reading
//!   lies between two raw system calls, and it reports the path this process takes too;
//! - `no-std/`, a project of its own, built here with `cargo build --locked --offline` into
//!   `target/examples` (its `panic = "abort"` must not reach this workspace): it links,
//!   builds without a warning, runs, and its readings lie between raw system calls;
//! - `getrandom-backend/` (getrandom 0.3) and `getrandom04-backend/` (the same program
//!   against getrandom 0.4), each built twice: with `--cfg getrandom_backend="custom"` its
//!   `getrandom::fill` is served by vdsotime (a vdsotime state is in use afterwards where
//!   the vDSO has getrandom), without the cfg by getrandom's own backend; no build warns,
//!   though neither project declares the cfg (no `[lints.rust]`).
//!
//! The nested builds share nothing with the outer one but the package cache, and every
//! crate they need is in it: the outer build just used the same versions (their lock files
//! hold only versions of this workspace's Cargo.lock).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use vdsotime::{ClockId, Function};

/// The core's runner of test processes: a time limit that kills the whole process group.
#[path = "../../crates/vdsotime/tests/support/process.rs"]
mod process;
/// The core's `SKIP` convention and its test of whether strace works here.
#[path = "../../crates/vdsotime/tests/support/skip.rs"]
mod skip;
#[path = "../../crates/vdsotime/tests/support/strace.rs"]
mod strace;

/// The limit for a nested build (vdsotime from scratch, release) or an example's run.
const LIMIT: Duration = Duration::from_secs(600);

/// A clock read by the raw system call, in nanoseconds.
fn syscall_ns(clock: ClockId) -> i128 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through the valid pointer.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_clock_gettime,
            libc::c_long::from(clock.as_raw()),
            &mut ts,
        )
    };
    assert_eq!(rc, 0, "clock_gettime({clock}) syscall");
    i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec)
}

/// Parses "SECONDS.NANOSECONDS" into nanoseconds.
fn parse_ns(text: &str) -> i128 {
    let (s, ns) = text.split_once('.').expect("seconds.nanoseconds");
    assert_eq!(ns.len(), 9, "nine digits of nanoseconds: {text}");
    s.parse::<i128>().expect("seconds") * 1_000_000_000 + ns.parse::<i128>().expect("ns")
}

/// The value after `key ` on the line that starts with it.
fn field<'a>(out: &'a str, key: &str) -> &'a str {
    out.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no line `{key} ...` in:\n{out}"))
}

/// Runs `program`, bracketing it with `clock` read by the syscall; its stdout and the bracket.
fn run_bracketed(program: &Path, clock: ClockId) -> (String, i128, i128) {
    let before = syscall_ns(clock);
    let out = process::output(&mut Command::new(program), LIMIT);
    let after = syscall_ns(clock);
    assert!(out.status.success(), "{program:?}: {out:?}");
    (String::from_utf8(out.stdout).expect("utf-8"), before, after)
}

/// target/, from this test's executable in target/<profile>/deps.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.ancestors()
        .nth(3)
        .expect("target/<profile>/deps/<test>")
        .to_path_buf()
}

/// Builds the example project `name` as its README says, in target/examples/<dir>, and
/// returns its binary. `cfg` is added to RUSTFLAGS. The build must not warn.
fn build(name: &str, binary: &str, cfg: Option<&str>, dir: &str) -> PathBuf {
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    let target = target_dir().join("examples").join(dir);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut rustflags = std::env::var("RUSTFLAGS").unwrap_or_default();
    if let Some(cfg) = cfg {
        rustflags.push_str(" --cfg ");
        rustflags.push_str(cfg);
    }
    let out = Command::new(cargo)
        .args([
            "build",
            "--release",
            "--locked",
            "--offline",
            "--target-dir",
        ])
        .arg(&target)
        .env("RUSTFLAGS", rustflags.trim())
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .current_dir(&project)
        .output()
        .expect("run cargo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "building {name} failed:\n{stderr}");
    assert!(
        !stderr.contains("warning"),
        "building {name} warns:\n{stderr}"
    );
    target.join("release").join(binary)
}

#[test]
fn quickstart_reads_the_kernels_realtime_and_names_its_path() {
    let (out, before, after) = run_bracketed(
        Path::new(env!("CARGO_BIN_EXE_quickstart")),
        ClockId::REALTIME,
    );
    let read = parse_ns(field(&out, "realtime"));
    assert!(
        before <= read && read <= after,
        "{before} <= {read} <= {after}\n{out}"
    );
    let path = vdsotime::path(Function::ClockGettime(ClockId::MONOTONIC)).to_string();
    assert_eq!(field(&out, "clock_gettime(MONOTONIC) ->"), path, "{out}");
    assert_eq!(
        field(&out, "getcpu ->"),
        vdsotime::path(Function::Getcpu).to_string()
    );
}

#[test]
fn no_std_no_main_binary_links_and_reads_the_clocks() {
    let program = build("no-std", "vdsotime-no-std-example", None, "no-std");
    for clock in [ClockId::MONOTONIC, ClockId::REALTIME] {
        let (out, before, after) = run_bracketed(&program, clock);
        let read = parse_ns(field(&out, &clock.to_string()));
        assert!(
            before <= read && read <= after,
            "{clock}: {before} <= {read} <= {after}"
        );
        let path = vdsotime::path(Function::ClockGettime(clock)).to_string();
        assert_eq!(field(&out, &format!("{clock} path")), path, "{out}");
    }
}

/// Without `std`, the first call reads `/proc/self/auxv` (one `openat`, `read`s and one
/// `close`) and confirms the image by `msync`; the clocks themselves make no system call.
/// strace shows every system call from the auxv `openat` to the exit: nothing else but
/// the program's own `write`s and `exit_group`.
#[test]
fn no_std_first_call_reads_the_auxv_file_and_the_clocks_make_no_system_call() {
    const TEST: &str = "no_std_first_call_reads_the_auxv_file_and_the_clocks_make_no_system_call";
    if let Some(why) = strace::unusable() {
        return skip::skip(TEST, "strace", why);
    }
    // SAFETY: getauxval only reads the process's aux vector.
    if unsafe { libc::getauxval(libc::AT_SYSINFO_EHDR) } == 0 {
        return skip::skip(TEST, "vdso", "no vDSO: every call is a system call");
    }
    let program = build("no-std", "vdsotime-no-std-example", None, "no-std");
    let log = target_dir().join(format!("no-std-strace-{}", std::process::id()));
    let out = process::output(
        Command::new("strace")
            .args(["-qq", "-o"])
            .arg(&log)
            .arg(&program),
        LIMIT,
    );
    assert!(out.status.success(), "{out:?}");
    let trace = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    let names: Vec<&str> = trace
        .lines()
        .skip_while(|l| !l.contains("\"/proc/self/auxv\""))
        .filter_map(|l| l.split('(').next())
        .filter(|n| !n.starts_with("+++"))
        .collect();
    let count = |name: &str| names.iter().filter(|&&n| n == name).count();
    assert_eq!(count("openat"), 1, "the auxv file opened once:\n{trace}");
    assert_eq!(count("close"), 1, "and closed once:\n{trace}");
    assert!(count("read") >= 1, "and read:\n{trace}");
    assert!(
        count("rt_sigprocmask") >= 1,
        "the image confirmed readable:\n{trace}"
    );
    let other: Vec<&&str> = names
        .iter()
        .filter(|n| {
            ![
                "openat",
                "read",
                "close",
                "rt_sigprocmask",
                "write",
                "exit_group",
            ]
            .contains(n)
        })
        .collect();
    assert!(other.is_empty(), "other system calls {other:?}:\n{trace}");
}

#[test]
fn getrandom_backend_serves_getrandom_only_with_its_cfg() {
    backend_serves_getrandom_only_with_its_cfg("getrandom-backend");
}

#[test]
fn getrandom04_backend_serves_getrandom_only_with_its_cfg() {
    backend_serves_getrandom_only_with_its_cfg("getrandom04-backend");
}

/// Builds the example project `name` with and without the custom cfg, and runs both.
fn backend_serves_getrandom_only_with_its_cfg(name: &str) {
    let binary = format!("vdsotime-{name}-example");
    let custom = build(
        name,
        &binary,
        Some("getrandom_backend=\"custom\""),
        &format!("{name}-custom"),
    );
    let default = build(name, &binary, None, &format!("{name}-default"));
    let vdso_getrandom = vdsotime::random::params().is_some();
    for (program, backend, in_use) in [
        (custom, "vdsotime", usize::from(vdso_getrandom)),
        (default, "getrandom's own", 0),
    ] {
        let (out, _, _) = run_bracketed(&program, ClockId::MONOTONIC);
        assert_eq!(field(&out, "backend"), backend, "{out}");
        let key = field(&out, "key");
        assert_eq!(key.len(), 64, "{out}");
        assert_ne!(key, "0".repeat(64), "{out}");
        let used: usize = field(&out, "vdsotime states in use")
            .parse()
            .expect("count");
        assert_eq!(used, in_use, "{backend}: vdsotime states in use\n{out}");
    }
}

/// `first-call ROUNDS` (the minimal program docs/performance.md measures the first call
/// with) starts itself once per path per round and prints each path's figures; a probe
/// process prints a positive ns figure, and an unknown path is an error.
#[test]
fn first_call_compares_every_path_in_fresh_processes() {
    let program = Path::new(env!("CARGO_BIN_EXE_first-call"));
    let out = process::output(Command::new(program).arg("3"), LIMIT);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    for path in ["vdsotime", "rustix", "glibc"] {
        let figures: Vec<f64> = field(&text, &format!("{path}:"))
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        assert_eq!(figures.len(), 3, "{path}: fastest, median, ratio\n{text}");
        assert!(
            figures[0] <= figures[1],
            "{path}: fastest above median\n{text}"
        );
        assert!(figures.iter().all(|f| *f > 0.0), "{path}: {text}");
    }
    let one = process::output(Command::new(program).arg("vdsotime"), LIMIT);
    let ns: i64 = String::from_utf8_lossy(&one.stdout)
        .trim()
        .parse()
        .expect("ns");
    assert!(one.status.success() && ns > 0, "{one:?}");
    let bad = process::output(Command::new(program).arg("nonsense"), LIMIT);
    assert!(!bad.status.success(), "{bad:?}");
}
