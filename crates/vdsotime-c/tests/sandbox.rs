//! Sandboxed C programs: a seccomp allowlist whose default action kills (only `write` and
//! `exit_group` allowed: tests/c/allowlist.h), then every clock the vDSO serves,
//! gettimeofday, time, clock_getres and getcpu (tests/c/sandbox.c). All must succeed, with
//! libvdsotime shared, as a static archive in a dynamic program and in a `-static` one, and
//! through the preload: with `vdsotime_init()` before the filter, and without it (the
//! library binds its functions when it is loaded, as glibc does). The same filter kills a
//! system call it does not allow: the proof that it is a sandbox at all.
//!
//! From the static archive, the constructor must come in with whichever function a program
//! uses: one program per function (tests/c/one_call.c). And other code may read the time
//! before the library's constructor runs, on several threads (tests/c/early.c).

mod support;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use support::matrix::{can_link, Link, Toolchain};
use support::skip::skip;
use support::{
    c_compiler, cc_with, crate_dir, install, pkg_config, pkg_config_static, run, scratch,
};

/// Clocksources the vDSO reads without entering the kernel.
const VDSO_CLOCKSOURCES: &[&str] = &["tsc", "hyperv_clocksource_tsc_page", "arch_sys_counter"];

/// Why the sandbox cannot be tested here, if it cannot.
fn cannot(test: &str) -> bool {
    if !cfg!(target_env = "gnu") {
        skip(
            test,
            "glibc",
            "getcpu is a system call without glibc's rseq area, and the preload and static \
             links are tested with glibc",
        );
        return true;
    }
    let cs =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default();
    let cs = cs.trim();
    if vdsotime::vdso().is_none() {
        skip(test, "vdso", "no vDSO: the clocks are system calls here");
        return true;
    }
    if !VDSO_CLOCKSOURCES.contains(&cs) {
        let why = format!("clocksource {cs:?}: the clocks are system calls here");
        skip(test, "vdso-clocksource", why);
        return true;
    }
    false
}

/// Whether getcpu enters the kernel here (no rseq area, and no vDSO `getcpu` or riscv64's,
/// whose body is the system call): the programs then leave it out, as the sandbox would
/// kill it.
fn getcpu_is_a_system_call() -> bool {
    match vdsotime::path(vdsotime::Function::Getcpu) {
        vdsotime::Path::Rseq => false,
        vdsotime::Path::Syscall => true,
        _ => cfg!(target_arch = "riscv64"),
    }
}

/// Builds `source` (in tests/c) with `flags` into `dir/exe`.
fn build(dir: &Path, source: &str, exe: &str, flags: &[String]) -> PathBuf {
    let exe = dir.join(exe);
    let mut flags = flags.to_vec();
    flags.push(format!("-I{}", crate_dir().join("tests/c").display()));
    if getcpu_is_a_system_call() {
        flags.push("-DNO_GETCPU".into());
    }
    cc_with(
        c_compiler(),
        &[crate_dir().join("tests/c").join(source)],
        &exe,
        &flags,
    );
    exe
}

/// How a sandboxed run ended.
enum Ending {
    /// Every call succeeded.
    Survived,
    /// The emulator cannot filter: nothing was tested.
    Unsupported,
}

/// Runs `exe mode` (no argument when `mode` is empty), which must print SANDBOX_OK.
fn survives(test: &str, exe: &Path, dir: &Path, env: &[(&str, PathBuf)], mode: &str) -> Ending {
    let mut cmd = Command::new(exe);
    if !mode.is_empty() {
        cmd.arg(mode);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let r = run(&mut cmd, dir, Duration::from_secs(60));
    if r.stdout.contains("SECCOMP_UNSUPPORTED") {
        return Ending::Unsupported;
    }
    let what = if mode.is_empty() {
        test.to_string()
    } else {
        format!("{test} ({mode})")
    };
    print!("{what}:\n{}", r.stdout);
    assert!(
        r.status.success() && r.stdout.contains("SANDBOX_OK"),
        "{what}: every call must succeed under the sandbox: {r:#?}"
    );
    Ending::Survived
}

/// sandbox.c's modes: with and without `vdsotime_init()` every call succeeds (`modes`), and
/// a system call the filter does not allow kills the process.
fn judge(test: &str, exe: &Path, dir: &Path, env: &[(&str, PathBuf)], modes: &[&str]) {
    for mode in modes {
        if let Ending::Unsupported = survives(test, exe, dir, env, mode) {
            return skip(
                test,
                "seccomp",
                "the emulator does not implement seccomp filters",
            );
        }
    }
    let mut cmd = Command::new(exe);
    cmd.arg("forbidden");
    let r = run(&mut cmd, dir, Duration::from_secs(60));
    assert_eq!(
        r.status.signal(),
        Some(libc::SIGSYS),
        "{test}: a system call the filter does not allow must be killed: {r:#?}"
    );
    println!("{test} (forbidden): killed by SIGSYS");
}

/// A scratch directory with the libraries installed in its `prefix`, unless the sandbox
/// cannot be tested here (said by a SKIP line).
fn prepared(test: &str, name: &str) -> Option<(PathBuf, PathBuf)> {
    if cannot(test) {
        return None;
    }
    let dir = scratch(name);
    let prefix = dir.join("prefix");
    install(&prefix);
    Some((dir, prefix))
}

/// The flags that link libvdsotime as `link` says, or why this machine cannot (`-static`).
fn link_flags(link: Link, prefix: &Path, dir: &Path) -> Result<Vec<String>, String> {
    Ok(match link {
        Link::Shared => {
            let mut flags = pkg_config(prefix, "vdsotime");
            flags.push(format!("-Wl,-rpath,{}", prefix.join("lib").display()));
            flags
        }
        Link::Archive => pkg_config_static(prefix, "vdsotime-static"),
        Link::Static => {
            can_link(&Toolchain::target(), Link::Static, "-static", dir)?;
            let mut flags = vec!["-static".to_string()];
            flags.extend(pkg_config_static(prefix, "vdsotime-static"));
            flags
        }
        other => unreachable!("not a mode of these tests: {other:?}"),
    })
}

/// sandbox.c linked as `link` says: after `vdsotime_init()`, and without it.
fn sandbox_linked(test: &str, name: &str, link: Link) {
    let Some((dir, prefix)) = prepared(test, name) else {
        return;
    };
    let flags = match link_flags(link, &prefix, &dir) {
        Ok(flags) => flags,
        Err(why) => return skip(test, "static-libc", why),
    };
    let exe = build(&dir, "sandbox.c", "sandbox", &flags);
    judge(test, &exe, &dir, &[], &["init", "at-load"]);
}

#[test]
fn shared_library_in_a_sandbox() {
    sandbox_linked(
        "sandbox::shared_library_in_a_sandbox",
        "sandbox-shared",
        Link::Shared,
    );
}

#[test]
fn archive_in_a_dynamic_program_in_a_sandbox() {
    sandbox_linked(
        "sandbox::archive_in_a_dynamic_program_in_a_sandbox",
        "sandbox-archive",
        Link::Archive,
    );
}

#[test]
fn static_program_in_a_sandbox() {
    sandbox_linked(
        "sandbox::static_program_in_a_sandbox",
        "sandbox-static",
        Link::Static,
    );
}

/// The preload's constructor initialises: a program that sandboxes itself keeps the
/// preload's clocks (each name the preload's, checked before the filter).
#[test]
fn preload_in_a_sandbox() {
    let test = "sandbox::preload_in_a_sandbox";
    let Some((dir, prefix)) = prepared(test, "sandbox-preload") else {
        return;
    };
    let include = format!("-I{}", prefix.join("include").display());
    let exe = build(
        &dir,
        "sandbox.c",
        "sandbox",
        &["-DLIBC_NAMES".into(), include, "-ldl".into()],
    );
    let preload = prefix.join("lib/libvdsotime_preload.so");
    judge(test, &exe, &dir, &[("LD_PRELOAD", preload)], &["at-load"]);
}

/// The clock functions of the header, each linked alone by one_call.c.
const FUNCTIONS: &[&str] = &[
    "clock_gettime",
    "clock_getres",
    "gettimeofday",
    "time",
    "getcpu",
    "sched_getcpu",
    "clock_gettime64",
    "clock_getres64",
    "gettimeofday64",
    "time64",
];

/// For each clock function, a program that uses it alone, linked as `link` says, sandboxes
/// itself first thing in `main` and survives its call.
fn each_function_alone(test: &str, name: &str, link: Link) {
    let Some((dir, prefix)) = prepared(test, name) else {
        return;
    };
    let flags = match link_flags(link, &prefix, &dir) {
        Ok(flags) => flags,
        Err(why) => return skip(test, "static-libc", why),
    };
    for function in FUNCTIONS {
        if function.contains("getcpu") && getcpu_is_a_system_call() {
            continue;
        }
        let mut flags = flags.clone();
        flags.push(format!("-DCALL_{function}"));
        let exe = build(&dir, "one_call.c", &format!("one_call_{function}"), &flags);
        let label = format!("{test}, vdsotime_{function} alone");
        if let Ending::Unsupported = survives(&label, &exe, &dir, &[], "") {
            return skip(
                test,
                "seccomp",
                "the emulator does not implement seccomp filters",
            );
        }
    }
}

#[test]
fn each_function_alone_from_the_archive_in_a_dynamic_program() {
    each_function_alone(
        "sandbox::each_function_alone_from_the_archive_in_a_dynamic_program",
        "sandbox-one-archive",
        Link::Archive,
    );
}

#[test]
fn each_function_alone_in_a_static_program() {
    each_function_alone(
        "sandbox::each_function_alone_in_a_static_program",
        "sandbox-one-static",
        Link::Static,
    );
}

/// Threads started by an earlier constructor read the time while the library's binds it
/// (from the archive, the program's constructor runs first; from the shared library, the
/// library's does): every function must then be bound, in the sandbox.
fn early_readers(test: &str, name: &str, link: Link) {
    let Some((dir, prefix)) = prepared(test, name) else {
        return;
    };
    let mut flags = match link_flags(link, &prefix, &dir) {
        Ok(flags) => flags,
        Err(why) => return skip(test, "static-libc", why),
    };
    flags.push("-pthread".into());
    let exe = build(&dir, "early.c", "early", &flags);
    for _ in 0..20 {
        if let Ending::Unsupported = survives(test, &exe, &dir, &[], "") {
            return skip(
                test,
                "seccomp",
                "the emulator does not implement seccomp filters",
            );
        }
    }
}

#[test]
fn early_readers_with_the_shared_library() {
    early_readers(
        "sandbox::early_readers_with_the_shared_library",
        "sandbox-early-shared",
        Link::Shared,
    );
}

#[test]
fn early_readers_in_a_static_program() {
    early_readers(
        "sandbox::early_readers_in_a_static_program",
        "sandbox-early-static",
        Link::Static,
    );
}
