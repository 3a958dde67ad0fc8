//! A sandboxed C program (tests/c/sandbox.c): `vdsotime_init()`, then a seccomp allowlist
//! whose default action kills (only `write` and `exit_group` allowed), then every clock the
//! vDSO serves, gettimeofday, time, clock_getres and getcpu: all must succeed, with
//! libvdsotime shared and static, and through the preload (whose constructor initialises).
//! Without `vdsotime_init()` the same program must die of SIGSYS on its first call: the
//! proof that the filter kills what it does not allow.

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
    if !cfg!(all(
        target_env = "gnu",
        any(target_arch = "x86_64", target_arch = "aarch64")
    )) {
        skip(
            test,
            "glibc",
            "the program's filter is written for x86-64 and arm64 glibc",
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

/// Builds sandbox.c with `flags` in `dir`.
fn build(dir: &Path, flags: &[String]) -> PathBuf {
    let exe = dir.join("sandbox");
    cc_with(
        c_compiler(),
        &[crate_dir().join("tests/c/sandbox.c")],
        &exe,
        flags,
    );
    exe
}

/// With init every call succeeds; without it, the process dies of SIGSYS.
fn judge(test: &str, exe: &Path, dir: &Path, env: &[(&str, PathBuf)], without_init: bool) {
    let sandbox = |mode: &str| {
        let mut cmd = Command::new(exe);
        cmd.arg(mode);
        for (k, v) in env {
            cmd.env(k, v);
        }
        run(&mut cmd, dir, Duration::from_secs(60))
    };
    let r = sandbox("init");
    print!("{test} (init):\n{}", r.stdout);
    assert!(
        r.status.success() && r.stdout.contains("SANDBOX_OK"),
        "{test}: after init, every call must succeed under the sandbox: {r:#?}"
    );
    if without_init {
        let r = sandbox("no-init");
        assert_eq!(
            r.status.signal(),
            Some(libc::SIGSYS),
            "{test}: without init, the first call's system call must be killed: {r:#?}"
        );
        println!("{test} (no init): killed by SIGSYS");
    }
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

#[test]
fn shared_library_in_a_sandbox() {
    let test = "sandbox::shared_library_in_a_sandbox";
    let Some((dir, prefix)) = prepared(test, "sandbox-shared") else {
        return;
    };
    let mut flags = pkg_config(&prefix, "vdsotime");
    flags.push(format!("-Wl,-rpath,{}", prefix.join("lib").display()));
    judge(test, &build(&dir, &flags), &dir, &[], true);
}

#[test]
fn static_program_in_a_sandbox() {
    let test = "sandbox::static_program_in_a_sandbox";
    let Some((dir, prefix)) = prepared(test, "sandbox-static") else {
        return;
    };
    if let Err(why) = can_link(&Toolchain::target(), Link::Static, "-static", &dir) {
        return skip(test, "static-libc", why);
    }
    let mut flags = vec!["-static".to_string()];
    flags.extend(pkg_config_static(&prefix, "vdsotime-static"));
    judge(test, &build(&dir, &flags), &dir, &[], true);
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
    let exe = build(&dir, &["-DLIBC_NAMES".into(), include, "-ldl".into()]);
    let preload = prefix.join("lib/libvdsotime_preload.so");
    judge(test, &exe, &dir, &[("LD_PRELOAD", preload)], false);
}
