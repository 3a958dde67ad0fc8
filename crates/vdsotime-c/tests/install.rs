//! install.sh as a packager runs it: its options and --help, the files and names it
//! installs (the preload and the manual pages among them), DESTDIR staging, the .pc files,
//! and stripped libraries by default.

mod support;

use std::fs;
use std::path::Path;
use std::process::Command;

use support::{build_dir, crate_dir, dynamic_section, install, install_from, run_ok, scratch};

fn install_sh() -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg(crate_dir().join("install.sh"))
        .env_remove("DESTDIR");
    cmd
}

#[test]
fn install_writes_the_c_names_the_preload_and_the_manual() {
    let dir = scratch("install");
    let prefix = dir.join("prefix");
    install(&prefix);
    install(&prefix); // idempotent: a second run replaces, does not fail
    let lib = prefix.join("lib");
    for f in [
        "libvdsotime.so",
        "libvdsotime.so.0",
        "libvdsotime.a",
        "libvdsotime_preload.so",
        "pkgconfig/vdsotime.pc",
        "pkgconfig/vdsotime-static.pc",
    ] {
        assert!(lib.join(f).exists(), "{f} missing");
    }
    assert!(prefix.join("include/vdsotime.h").is_file());
    let man3 = prefix.join("share/man/man3");
    assert!(man3.join("libvdsotime.3").is_file());
    for f in [
        "vdsotime_clock_gettime.3",
        "vdsotime_getrandom.3",
        "vdsotime_time64.3",
    ] {
        let page = fs::read_to_string(man3.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert_eq!(page, ".so man3/libvdsotime.3\n", "{f}");
    }
    let soname = dynamic_section(&lib.join("libvdsotime.so.0"));
    assert!(
        soname.contains("Library soname: [libvdsotime.so.0]"),
        "{soname}"
    );
    assert!(
        soname.contains("NODELETE"),
        "not linked -z nodelete:\n{soname}"
    );
    let pc = fs::read_to_string(lib.join("pkgconfig/vdsotime.pc")).expect("read .pc");
    assert!(
        pc.lines()
            .any(|l| l == format!("prefix={}", prefix.display())),
        "{pc}"
    );
    assert!(
        pc.contains(&format!("Version: {}", env!("CARGO_PKG_VERSION"))),
        "{pc}"
    );
    // `cc -static` has no libgcc_s: the compiler driver links the unwinder itself.
    let static_pc = fs::read_to_string(lib.join("pkgconfig/vdsotime-static.pc")).expect(".pc");
    assert!(
        !static_pc.contains("gcc_s") && !pc.contains("gcc_s"),
        "{static_pc}{pc}"
    );
}

#[test]
fn help_and_bad_arguments() {
    let help = run_ok(install_sh().arg("--help"));
    let text = String::from_utf8_lossy(&help.stdout);
    for word in [
        "usage: install.sh",
        "--prefix",
        "--from",
        "DESTDIR",
        "--no-strip",
    ] {
        assert!(text.contains(word), "--help lacks {word}:\n{text}");
    }
    for (args, says) in [
        (&["--bogus"][..], "unknown argument: --bogus"),
        (&["--prefix"][..], "--prefix needs a value"),
        (
            &["--prefix", "relative/dir"][..],
            "must be an absolute path",
        ),
    ] {
        let out = support::process::output(install_sh().args(args), support::LIMIT);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// DESTDIR stages the tree: every file under it, the .pc files naming the final prefix.
#[test]
fn destdir_stages_what_the_pc_files_place_under_the_prefix() {
    let dir = scratch("install-destdir");
    let stage = dir.join("stage");
    let out = run_ok(
        install_sh()
            .args(["--prefix", "/usr", "--libdir", "/usr/lib/x86_64-linux-gnu"])
            .arg("--from")
            .arg(build_dir())
            .arg("--no-strip")
            .env("DESTDIR", &stage),
    );
    let lib = stage.join("usr/lib/x86_64-linux-gnu");
    assert!(lib.join("libvdsotime.so.0").is_file());
    assert!(stage.join("usr/include/vdsotime.h").is_file());
    assert!(stage.join("usr/share/man/man3/libvdsotime.3").is_file());
    let pc = fs::read_to_string(lib.join("pkgconfig/vdsotime-static.pc")).expect("read .pc");
    assert!(pc.contains("prefix=/usr\n"), "{pc}");
    assert!(pc.contains("libdir=/usr/lib/x86_64-linux-gnu\n"), "{pc}");
    assert!(!pc.contains(stage.to_str().expect("utf-8")), "{pc}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("ldconfig"));
}

fn has_debug_info(file: &Path) -> bool {
    let out = run_ok(Command::new("readelf").arg("-S").arg(file));
    String::from_utf8_lossy(&out.stdout).contains(".debug_info")
}

/// The test build has debug information; installed, it has none, unless --no-strip. Only
/// where the machine's strip reads the target's objects (x86 builds on this x86 machine).
#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
#[test]
fn installed_libraries_carry_no_debug_information() {
    let dir = scratch("install-strip");
    assert!(has_debug_info(&build_dir().join("libvdsotime_c.so")));
    let stripped = dir.join("stripped");
    let said = install_from(&build_dir(), &stripped, &[]);
    assert!(said.contains("installed libvdsotime"), "{said}");
    for f in [
        "libvdsotime.so.0",
        "libvdsotime.a",
        "libvdsotime_preload.so",
    ] {
        assert!(!has_debug_info(&stripped.join("lib").join(f)), "{f}");
    }
    let kept = dir.join("kept");
    install_from(&build_dir(), &kept, &["--no-strip"]);
    assert!(has_debug_info(&kept.join("lib/libvdsotime.so.0")));
}

/// CLOCK_MONOTONIC by the raw system call, in ns.
fn monotonic_ns() -> i128 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through the valid pointer.
    let rc = unsafe { libc::syscall(libc::SYS_clock_gettime, libc::CLOCK_MONOTONIC, &mut ts) };
    assert_eq!(rc, 0);
    i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec)
}

/// The README's C quick start (examples/c/quickstart.c), installed and built the way the
/// README says: linked through pkg-config against the shared library (found at run time
/// through the rpath the README suggests where `ldconfig` does not apply) and against the
/// archive, fully static; each prints CLOCK_MONOTONIC, which must lie between two raw
/// system calls.
#[test]
fn the_readme_c_quick_start_builds_and_runs_both_ways() {
    let dir = scratch("quickstart");
    let prefix = dir.join("prefix");
    install(&prefix);
    let source = crate_dir().join("../../examples/c/quickstart.c");
    let lib = prefix.join("lib");
    let shared = dir.join("quickstart-shared");
    let mut flags = support::pkg_config(&prefix, "vdsotime");
    flags.push(format!("-Wl,-rpath,{}", lib.display()));
    support::cc(std::slice::from_ref(&source), &shared, &flags);
    let fully_static = dir.join("quickstart-static");
    let mut flags = vec!["-static".to_string()];
    flags.extend(support::pkg_config_static(&prefix, "vdsotime-static"));
    // What a musl link adds (an unwinder for the archive's Rust code), as the link matrix.
    flags.extend(support::archive_link_extra());
    support::cc(&[source], &fully_static, &flags);
    for program in [shared, fully_static] {
        let before = monotonic_ns();
        let out = run_ok(&mut Command::new(&program));
        let after = monotonic_ns();
        let text = String::from_utf8_lossy(&out.stdout);
        let (s, ns) = text.trim().split_once('.').expect("seconds.nanoseconds");
        let read = s.parse::<i128>().expect("s") * 1_000_000_000 + ns.parse::<i128>().expect("ns");
        assert!(
            before <= read && read <= after,
            "{program:?}: {before} <= {read} <= {after}"
        );
    }
}
