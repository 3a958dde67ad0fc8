//! The IFUNC-bound `vdsotime_time` and `vdsotime_gettimeofday` (glibc, x86-64 and
//! aarch64): a program's calls land in the vDSO itself, a library relocated before
//! libvdsotime gets the wrappers, and every binding tells the kernel's time, with lazy
//! and immediate binding alike.

#![cfg(all(target_env = "gnu", target_arch = "x86_64"))]

mod support;

use std::process::Command;

use support::{cc, crate_dir, install, pkg_config, run_ok, scratch};

/// Builds ifunc_order.c with ifunc_early.c's library linked after libvdsotime, runs it
/// (with `LD_BIND_NOW` if `now`) and returns its stdout and stderr.
fn run_order(name: &str, now: bool) -> (String, String) {
    let dir = scratch(name);
    let prefix = dir.join("prefix");
    install(&prefix);
    let c = crate_dir().join("tests/c");
    let early = dir.join("libearly.so");
    // No -lvdsotime: the library's references stay undefined until the program's scope.
    cc(
        &[c.join("ifunc_early.c")],
        &early,
        &["-shared".into(), "-fPIC".into()],
    );
    let exe = dir.join("ifunc_order");
    let mut flags = pkg_config(&prefix, "vdsotime");
    flags.extend([
        "-ldl".into(),
        format!("-L{}", dir.display()),
        "-Wl,--no-as-needed".into(),
        "-learly".into(),
    ]);
    cc(&[c.join("ifunc_order.c")], &exe, &flags);
    let mut cmd = Command::new(&exe);
    cmd.env(
        "LD_LIBRARY_PATH",
        format!("{}:{}", prefix.join("lib").display(), dir.display()),
    );
    if now {
        cmd.env("LD_BIND_NOW", "1");
    }
    let out = run_ok(&mut cmd);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn landed<'a>(stdout: &'a str, who_name: &str) -> (&'a str, &'a str) {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix(who_name)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no line for {who_name}:\n{stdout}"));
    line.split_once(' ').expect("object and verdict")
}

#[test]
fn the_program_calls_the_vdso_and_an_early_library_the_wrappers() {
    for now in [false, true] {
        let (stdout, stderr) = run_order(if now { "ifunc-now" } else { "ifunc-lazy" }, now);
        for who in ["program", "early"] {
            for name in ["vdsotime_time", "vdsotime_gettimeofday"] {
                let (object, verdict) = landed(&stdout, &format!("{who} {name}"));
                assert_eq!(verdict, "ok", "{who} {name}: wrong time\n{stdout}");
                let expected = if who == "program" {
                    "linux-vdso.so.1"
                } else {
                    "libvdsotime.so.0"
                };
                assert_eq!(
                    object, expected,
                    "{who} {name} (now={now})\n{stdout}{stderr}"
                );
            }
        }
        // glibc names the unsatisfiable order; the library answered it safely.
        assert!(stderr.contains("Relink"), "no relink warning:\n{stderr}");
    }
}
