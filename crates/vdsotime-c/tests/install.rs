//! install.sh as a packager runs it: its options and --help, the files and names it
//! installs (the preload and the manual pages among them), DESTDIR staging, the .pc files,
//! and stripped libraries by default.

mod support;

use std::fs;
use std::path::{Path, PathBuf};
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
    assert!(man3.join("libvdsotime_preload.3").is_file());
    for f in [
        "vdsotime_clock_gettime.3",
        "vdsotime_getrandom.3",
        "vdsotime_time64.3",
    ] {
        let target = fs::read_link(man3.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert_eq!(target, Path::new("libvdsotime.3"), "{f}");
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

/// The libraries install.sh reads from a build directory.
const BUILT: [&str; 3] = [
    "libvdsotime_c.so",
    "libvdsotime_c.a",
    "libvdsotime_preload.so",
];

/// A copy of the build's libraries in `dir`, each with debug information: the build's own
/// where it has some (a default debug build), else a `.debug_info` section added with
/// objcopy (a build without it, as CI compiles its tests), so that stripping has
/// something to remove either way.
fn built_with_debug_info(dir: &Path) -> PathBuf {
    fs::create_dir_all(dir).expect("create the copy's directory");
    let filler = dir.join("debug_info.bin");
    fs::write(&filler, [0u8; 64]).expect("write the section's bytes");
    for name in BUILT {
        let copy = dir.join(name);
        fs::copy(build_dir().join(name), &copy).expect("copy a built library");
        if !has_debug_info(&copy) {
            run_ok(
                Command::new("objcopy")
                    .arg(format!("--add-section=.debug_info={}", filler.display()))
                    .arg(&copy),
            );
        }
        assert!(has_debug_info(&copy), "{name}");
    }
    dir.to_path_buf()
}

/// Libraries with debug information, installed, have none, unless --no-strip, and the
/// stripped preload still works. Only
/// where the machine's strip reads the target's objects (x86 builds on this x86 machine).
#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
#[test]
fn installed_libraries_carry_no_debug_information() {
    let dir = scratch("install-strip");
    let from = built_with_debug_info(&dir.join("from"));
    let stripped = dir.join("stripped");
    let said = install_from(&from, &stripped, &[]);
    assert!(said.contains("installed libvdsotime"), "{said}");
    for f in [
        "libvdsotime.so.0",
        "libvdsotime.a",
        "libvdsotime_preload.so",
    ] {
        assert!(!has_debug_info(&stripped.join("lib").join(f)), "{f}");
    }
    // Stripped, the preload still serves a program: the machine's `date`, where the preload
    // is built for the machine's own C library (x86-64 glibc), not for another target's.
    let preload = stripped.join("lib/libvdsotime_preload.so");
    if cfg!(all(target_arch = "x86_64", target_env = "gnu")) {
        let out = run_ok(
            Command::new("date")
                .env("LD_PRELOAD", &preload)
                .env("VDSOTIME_PRELOAD_DEBUG", "1"),
        );
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            said.contains("names bound here") && said.contains(&*preload.to_string_lossy()),
            "{said}"
        );
    } else {
        support::skip::skip(
            "installed_libraries_carry_no_debug_information (the stripped preload under date)",
            "glibc64",
            "the machine's date is an x86-64 glibc program, and this preload is another target's",
        );
    }
    let kept = dir.join("kept");
    install_from(&from, &kept, &["--no-strip"]);
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
        assert_prints_monotonic(&program);
    }
}

/// Runs the quick start `program`: the CLOCK_MONOTONIC reading it prints must lie between
/// two raw system calls.
fn assert_prints_monotonic(program: &Path) {
    let before = monotonic_ns();
    let out = run_ok(&mut Command::new(program));
    let after = monotonic_ns();
    let text = String::from_utf8_lossy(&out.stdout);
    let (s, ns) = text.trim().split_once('.').expect("seconds.nanoseconds");
    let read = s.parse::<i128>().expect("s") * 1_000_000_000 + ns.parse::<i128>().expect("ns");
    assert!(
        before <= read && read <= after,
        "{program:?}: {before} <= {read} <= {after}"
    );
}

/// The C++ compiler beside the test's C compiler: `c++` for the machine's own target (with
/// its `-m32`), none for another target's compiler (`cargo xtask cross`).
fn cxx_compiler() -> Result<Command, &'static str> {
    if std::env::var("VDSOTIME_TEST_CC").is_ok_and(|cc| !cc.trim().is_empty()) {
        return Err("VDSOTIME_TEST_CC names another target's C compiler, and no C++ one");
    }
    let mut cmd = Command::new("c++");
    cmd.args(support::c_compiler_words().into_iter().skip(1));
    match Command::new("c++").arg("--version").output() {
        Ok(o) if o.status.success() => Ok(cmd),
        _ => Err("no c++ on the PATH (Debian: g++)"),
    }
}

/// The header works in strict ISO C and in C++: the quick start, as printed, builds with
/// `-std=c99`, `-std=c11` and `-std=gnu17` (`-pedantic -Werror`) and as C++, and runs; and
/// without its `_POSIX_C_SOURCE` line (the header alone providing `CLOCK_MONOTONIC`) with
/// `-std=c11` and as C++, where the C library's headers declare `struct timespec`.
#[test]
fn the_c_quick_start_builds_in_strict_iso_c_and_as_cpp() {
    const TEST: &str = "the_c_quick_start_builds_in_strict_iso_c_and_as_cpp";
    let dir = scratch("quickstart-modes");
    let prefix = dir.join("prefix");
    install(&prefix);
    let source = crate_dir().join("../../examples/c/quickstart.c");
    let printed = fs::read_to_string(&source).expect("quickstart.c");
    let posix_line = printed.lines().next().unwrap_or_default();
    assert!(
        posix_line.starts_with("#define _POSIX_C_SOURCE"),
        "{printed}"
    );
    let bare = dir.join("quickstart-bare.c");
    fs::write(&bare, printed.replacen(posix_line, "", 1)).expect("write");
    let mut link = support::pkg_config(&prefix, "vdsotime");
    link.push(format!("-Wl,-rpath,{}", prefix.join("lib").display()));
    let strict = ["-pedantic", "-Wall", "-Wextra", "-Werror"];
    for (std, source) in [
        ("-std=c99", &source),
        ("-std=c11", &source),
        ("-std=gnu17", &source),
        ("-std=c11", &bare),
    ] {
        let program = dir.join(format!(
            "quickstart{std}-{}",
            source.file_stem().unwrap().display()
        ));
        let mut flags: Vec<String> = [std].iter().chain(&strict).map(|f| f.to_string()).collect();
        flags.extend(link.iter().cloned());
        support::cc(std::slice::from_ref(source), &program, &flags);
        assert_prints_monotonic(&program);
    }
    for source in [&source, &bare] {
        let mut cmd = match cxx_compiler() {
            Ok(cxx) => cxx,
            Err(why) => return support::skip::skip(TEST, "c++", why),
        };
        let program = dir.join(format!(
            "quickstart-cxx-{}",
            source.file_stem().unwrap().display()
        ));
        cmd.args(strict)
            .arg("-x")
            .arg("c++")
            .arg(source)
            .arg("-x")
            .arg("none");
        cmd.arg("-o").arg(&program).args(&link);
        run_ok(&mut cmd);
        assert_prints_monotonic(&program);
    }
}

/// The README's C build commands, run as printed (bash, `-e`) with their `PREFIX=` line
/// pointed at a fresh install outside the loader's search path, in a directory holding the
/// quick start as `prog.c`: each `prog` they build runs without `LD_LIBRARY_PATH` or
/// `ldconfig`.
#[test]
fn the_readmes_c_build_commands_work_for_any_prefix() {
    const TEST: &str = "the_readmes_c_build_commands_work_for_any_prefix";
    if std::env::var("VDSOTIME_TEST_CC").is_ok_and(|cc| !cc.trim().is_empty()) {
        return support::skip::skip(
            TEST,
            "native-cc",
            "the README's `cc` builds for this machine, not VDSOTIME_TEST_CC's target",
        );
    }
    let readme = fs::read_to_string(crate_dir().join("../../README.md")).expect("README.md");
    let block = readme
        .split("```sh\n")
        .filter_map(|b| b.split_once("```").map(|(code, _)| code))
        .find(|code| code.contains("PKG_CONFIG_PATH"))
        .expect("README.md has a sh block with the C build commands");
    let dir = scratch("readme-c-commands");
    let prefix = dir.join("prefix");
    install(&prefix);
    fs::copy(
        crate_dir().join("../../examples/c/quickstart.c"),
        dir.join("prog.c"),
    )
    .expect("prog.c");
    let mut builds = Vec::new();
    for line in block.lines() {
        let command = if line.starts_with("PREFIX=") {
            format!("PREFIX='{}'", prefix.display())
        } else {
            line.to_string()
        };
        let script = format!("{}\n{command}\n", builds.join("\n"));
        if command.starts_with("cc ") {
            run_ok(
                Command::new("bash")
                    .args(["-e", "-c", &script])
                    .current_dir(&dir),
            );
            assert_prints_monotonic(&dir.join("prog"));
            fs::remove_file(dir.join("prog")).expect("rm prog");
        } else {
            builds.push(command);
        }
    }
    assert!(block.contains("-static"), "{block}");
}

/// `man` on `args` with `env`, from `cwd`, as plain text; None (after a visible skip)
/// where the machine has no `man`.
fn man(test: &str, cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> Option<String> {
    let mut cmd = Command::new("man");
    cmd.args(args)
        .current_dir(cwd)
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "200")
        .env_remove("MANPATH");
    for (k, v) in env {
        cmd.env(k, v);
    }
    match cmd.output() {
        Ok(o) => {
            let (out, err) = (
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr),
            );
            assert!(
                o.status.success() && err.trim().is_empty(),
                "man {args:?}: {o:?}\n{err}"
            );
            Some(out.into_owned())
        }
        Err(e) => {
            support::skip::skip(test, "help-tools", format!("man: {e}"));
            None
        }
    }
}

/// Every installed page renders both ways a reader opens it: `man -l FILE` from another
/// directory (the per-function pages are links to libvdsotime(3)), and `man NAME` through
/// MANPATH. The preload's page says what VDSOTIME_PRELOAD_DEBUG does, and the two pages
/// name each other; `--no-preload` leaves the preload's page out.
#[test]
fn the_manual_pages_render_with_man_l_and_through_manpath() {
    const TEST: &str = "the_manual_pages_render_with_man_l_and_through_manpath";
    let dir = scratch("install-man");
    let prefix = dir.join("prefix");
    install(&prefix);
    let mandir = prefix.join("share/man");
    let man3 = mandir.join("man3");
    let pages = [
        ("libvdsotime", "LIBVDSOTIME(3)", "libvdsotime_preload(3)"),
        (
            "vdsotime_clock_gettime",
            "LIBVDSOTIME(3)",
            "vdsotime_clock_gettime",
        ),
        ("vdsotime_getrandom", "LIBVDSOTIME(3)", "vdsotime_getrandom"),
        (
            "libvdsotime_preload",
            "LIBVDSOTIME_PRELOAD(3)",
            "VDSOTIME_PRELOAD_DEBUG",
        ),
    ];
    for (name, title, says) in pages {
        let file = man3.join(format!("{name}.3"));
        let file = file.to_str().expect("utf-8 path");
        let Some(by_file) = man(TEST, &dir, &["-l", file], &[]) else {
            return;
        };
        let Some(by_name) = man(TEST, &dir, &["3", name], &[("MANPATH", &mandir)]) else {
            return;
        };
        let other = if name == "libvdsotime_preload" {
            "libvdsotime(3)"
        } else {
            "libvdsotime_preload(3)"
        };
        for (how, text) in [("man -l", &by_file), ("man through MANPATH", &by_name)] {
            let see_also = text.split_once("SEE ALSO").map_or("", |(_, rest)| rest);
            assert!(
                see_also.contains(other),
                "{how} {name}: SEE ALSO lacks {other}:\n{text}"
            );
            assert!(
                text.contains(title) && text.contains("SYNOPSIS"),
                "{how} {name}:\n{text}"
            );
            assert!(
                text.contains(says),
                "{how} {name} does not say {says}:\n{text}"
            );
            // The pages hold for a package install as well as a prefix one: no path of a
            // prefix install given as the place, no option of install.sh given as the rule.
            for wrong in ["/usr/local", "unless install.sh was given"] {
                assert!(
                    !text.contains(wrong),
                    "{how} {name} says {wrong:?}:\n{text}"
                );
            }
        }
    }
    let bare = dir.join("no-preload");
    install_from(&build_dir(), &bare, &["--no-strip", "--no-preload"]);
    assert!(!bare.join("share/man/man3/libvdsotime_preload.3").exists());
    assert!(bare.join("share/man/man3/libvdsotime.3").exists());
}
