//! The C link matrix: tests/c/link_matrix.c built in one link mode against an installed
//! libvdsotime, then run three ways: as it is (with the vDSO); through tests/c/noauxv.c, as
//! a process whose auxiliary vector has no AT_SYSINFO_EHDR (what a kernel booted with
//! vdso=0 gives); and under valgrind, which hides the vDSO too and checks every memory
//! access. A way that cannot run here says `SKIP` through the shared helper.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::skip::skip;
use super::{
    archive_link_extra, c_compiler, c_compiler_words, cc_with, crate_dir, dynamic_section,
    pkg_config, pkg_config_static, run, run_ok,
};

/// How a program uses the library.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link {
    /// `-lvdsotime`: libvdsotime.so.0, found through an rpath.
    Shared,
    /// libvdsotime.a in a dynamically linked program.
    Archive,
    /// libvdsotime.a in a `-static` program.
    Static,
    /// libvdsotime.a in a `-static-pie` program.
    StaticPie,
    /// Not linked: dlopen, the checks, dlclose, three times, threads exiting after.
    Dlopen,
    /// As [`Link::Dlopen`], of a plugin: a shared object with libvdsotime.a inside,
    /// linked without `-z nodelete`.
    Plugin,
    /// The libc names, served by the preload library (`LD_PRELOAD`).
    Preload,
}

/// One `#[test]` per link mode, each calling `$cell(name, link)`: the rows of a matrix.
#[allow(unused_macros)] // used by the matrix test files only, not by every user of support
macro_rules! link_mode_tests {
    ($cell:path) => {
        #[test]
        fn shared_library() {
            $cell("shared_library", Link::Shared);
        }

        #[test]
        fn archive_in_a_dynamic_program() {
            $cell("archive_in_a_dynamic_program", Link::Archive);
        }

        #[test]
        fn static_program() {
            $cell("static_program", Link::Static);
        }

        #[test]
        fn static_pie_program() {
            $cell("static_pie_program", Link::StaticPie);
        }

        /// dlopen, use, dlclose, three times, with threads that exit after each dlclose:
        /// the library stays mapped for their thread-exit destructor.
        #[test]
        fn dlopen_dlclose_loop() {
            $cell("dlopen_dlclose_loop", Link::Dlopen);
        }

        /// The same with a plugin built from the static archive (no `-z nodelete`):
        /// after its dlclose, its threads' exit must not call into it.
        #[test]
        fn plugin_from_the_archive_dlclosed() {
            $cell("plugin_from_the_archive_dlclosed", Link::Plugin);
        }

        #[test]
        fn preload_library() {
            $cell("preload_library", Link::Preload);
        }
    };
}
#[allow(unused_imports)]
pub(crate) use link_mode_tests;

/// The C compiler and C library a program is built with.
#[derive(Clone, Debug)]
pub struct Toolchain {
    /// Its name in messages.
    pub name: &'static str,
    /// The compiler command, as words.
    pub cc: Vec<String>,
    /// The compiler command for `-static-pie`, if it is another.
    pub static_pie_cc: Option<Vec<String>>,
    /// Added to every link against the static archive (musl: an unwinder).
    pub archive_extra: Vec<String>,
    /// Whether the C library is glibc.
    pub glibc: bool,
}

impl Toolchain {
    /// The compiler the tests were built for: `cc`, or `VDSOTIME_TEST_CC` under
    /// `cargo xtask cross`.
    pub fn target() -> Toolchain {
        Toolchain {
            name: "the target's C library",
            cc: c_compiler_words(),
            static_pie_cc: None,
            archive_extra: archive_link_extra(),
            glibc: cfg!(target_env = "gnu"),
        }
    }

    fn command(&self, link: Link) -> Command {
        let words = match (&self.static_pie_cc, link) {
            (Some(words), Link::StaticPie) => words,
            _ => &self.cc,
        };
        let mut cmd = Command::new(&words[0]);
        cmd.args(&words[1..]);
        cmd
    }
}

/// A built program and how to start it (after its `vdso`/`no-vdso` argument).
pub struct Program {
    exe: PathBuf,
    args: Vec<OsString>,
    env: Vec<(&'static str, OsString)>,
    /// `-static`/`-static-pie` with glibc: see [`valgrind`].
    static_glibc: bool,
}

/// Builds link_matrix.c for `link` against the library installed in `prefix`, in `dir`;
/// `Err` says why this toolchain cannot make such a program at all.
pub fn build(tc: &Toolchain, link: Link, prefix: &Path, dir: &Path) -> Result<Program, String> {
    let lib = prefix.join("lib");
    let include = format!("-I{}", prefix.join("include").display());
    let mut flags: Vec<String> = vec!["-pthread".into()];
    let (mut args, mut env) = (Vec::new(), Vec::new());
    match link {
        Link::Shared => {
            flags.extend(pkg_config(prefix, "vdsotime"));
            flags.push(format!("-Wl,-rpath,{}", lib.display()));
        }
        Link::Archive => {
            flags.extend(pkg_config(prefix, "vdsotime-static"));
            flags.extend(tc.archive_extra.iter().cloned());
        }
        Link::Static | Link::StaticPie => {
            let mode = if link == Link::Static {
                "-static"
            } else {
                "-static-pie"
            };
            can_link(tc, link, mode, dir)?;
            flags.push(mode.into());
            flags.extend(pkg_config_static(prefix, "vdsotime-static"));
            flags.extend(tc.archive_extra.iter().cloned());
        }
        Link::Dlopen => {
            flags.extend(["-DVIA_DLOPEN".into(), include, "-ldl".into()]);
            args.push(lib.join("libvdsotime.so.0").into());
        }
        Link::Plugin => {
            flags.extend(["-DVIA_DLOPEN".into(), include, "-ldl".into()]);
            args.push(build_plugin(tc, prefix, dir).into());
            // Where the vDSO has getrandom, the plugin's threads must prove they took a
            // state (a destructor armed), so that its dlclose is tested with one.
            let getrandom = if vdsotime::random::params().is_some() {
                "vdso-getrandom"
            } else {
                skip(
                    "link_matrix plugin: each thread holds a getrandom state",
                    "vdso",
                    "this vDSO has no getrandom (Linux 6.11+ on x86-64, 6.12+ elsewhere)",
                );
                "no-vdso-getrandom"
            };
            args.extend(["plugin".into(), getrandom.into()]);
        }
        Link::Preload => {
            flags.extend(["-DLIBC_NAMES".into(), include, "-ldl".into()]);
            env.push(("LD_PRELOAD", lib.join("libvdsotime_preload.so").into()));
        }
    }
    let exe = dir.join("link_matrix");
    let source = crate_dir().join("tests/c/link_matrix.c");
    cc_with(tc.command(link), &[source], &exe, &flags);
    check_linkage(link, &exe);
    Ok(Program {
        exe,
        args,
        env,
        static_glibc: tc.glibc && matches!(link, Link::Static | Link::StaticPie),
    })
}

/// tests/c/plugin.c as a shared object with the static archive inside, linked as
/// vdsotime-static.pc says, and not `-z nodelete` (so its dlclose unmaps it).
fn build_plugin(tc: &Toolchain, prefix: &Path, dir: &Path) -> PathBuf {
    let plugin = dir.join("plugin.so");
    let mut flags: Vec<String> = vec!["-shared".into(), "-fPIC".into(), "-pthread".into()];
    flags.extend(pkg_config_static(prefix, "vdsotime-static"));
    flags.extend(tc.archive_extra.iter().cloned());
    let source = crate_dir().join("tests/c/plugin.c");
    cc_with(tc.command(Link::Plugin), &[source], &plugin, &flags);
    let dynamic = dynamic_section(&plugin);
    assert!(
        !dynamic.contains("NODELETE"),
        "the plugin must be unloadable:\n{dynamic}"
    );
    assert!(
        !dynamic.contains("[libvdsotime.so.0]"),
        "the plugin must hold the archive:\n{dynamic}"
    );
    plugin
}

/// Whether `tc` makes a program of this kind from an empty `main`: it needs the C
/// library's static archive, and musl-gcc's specs file makes a dynamic program of
/// `-static-pie` without a word.
pub fn can_link(tc: &Toolchain, link: Link, mode: &str, dir: &Path) -> Result<(), String> {
    let probe = dir.join("probe.c");
    fs::write(&probe, "int main(void) { return 0; }\n").expect("write probe.c");
    let exe = dir.join("probe");
    let out = tc
        .command(link)
        .arg(mode)
        .arg(&probe)
        .arg("-o")
        .arg(&exe)
        .output()
        .map_err(|e| format!("cannot run the C compiler: {e}"))?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        let line = why.lines().find(|l| l.contains("error")).unwrap_or("");
        return Err(format!("{} cannot link a {mode} program: {line}", tc.name));
    }
    if interpreter(&exe) {
        return Err(format!("{} made a dynamic program of {mode}", tc.name));
    }
    Ok(())
}

/// Whether `exe` names a dynamic linker (`PT_INTERP`).
fn interpreter(exe: &Path) -> bool {
    let out = run_ok(Command::new("readelf").arg("-lW").arg(exe));
    String::from_utf8_lossy(&out.stdout).contains("INTERP")
}

/// The program is linked as its mode says: no libvdsotime.so.0 where the archive is in
/// it, no dynamic linker or no library at all for the static modes.
fn check_linkage(link: Link, exe: &Path) {
    let dynamic = dynamic_section(exe);
    let needs_lib = dynamic.contains("[libvdsotime.so.0]");
    assert_eq!(needs_lib, link == Link::Shared, "{link:?}:\n{dynamic}");
    if matches!(link, Link::Static | Link::StaticPie) {
        assert!(!interpreter(exe), "{link:?} program with a dynamic linker");
        assert!(!dynamic.contains("(NEEDED)"), "{link:?}:\n{dynamic}");
    }
}

/// The three ways a program runs.
#[derive(Clone, Copy, Debug)]
enum Way {
    Native,
    NoAuxv,
    Valgrind,
}

/// Runs `program` each way; `test` names the cell in failures and SKIP lines.
pub fn run_each_way(test: &str, program: &Program, dir: &Path) {
    for way in [Way::Native, Way::NoAuxv, Way::Valgrind] {
        let cell = format!("{test} ({way:?})");
        let mut cmd = match way {
            Way::Native => Command::new(&program.exe),
            Way::NoAuxv => match noauxv() {
                Ok(launcher) => {
                    // The environment goes to the program only, through the launcher
                    // (a musl preload would stop the glibc launcher).
                    let mut cmd = Command::new(launcher);
                    cmd.args(pairs(&program.env)).arg(&program.exe);
                    cmd
                }
                Err(why) => {
                    skip(&cell, "ptrace", why);
                    continue;
                }
            },
            Way::Valgrind => match valgrind(program) {
                Ok(cmd) => cmd,
                Err(why) => {
                    skip(&cell, "valgrind", why);
                    continue;
                }
            },
        };
        cmd.arg(if matches!(way, Way::Native) {
            "vdso"
        } else {
            "no-vdso"
        })
        .args(&program.args);
        if matches!(way, Way::Native) {
            cmd.envs(program.env.iter().map(|(k, v)| (k, v)));
        }
        let run_dir = dir.join(format!("{way:?}"));
        fs::create_dir_all(&run_dir).expect("create run dir");
        let start = Instant::now();
        let r = run(&mut cmd, &run_dir, Duration::from_secs(180));
        if matches!(way, Way::NoAuxv) && r.status.code() == Some(NOAUXV_CANNOT) {
            skip(&cell, "ptrace", r.stderr.trim());
            continue;
        }
        assert!(
            r.status.success() && r.stdout.contains(", 0 failed"),
            "{cell}: {}\n--- stdout\n{}--- stderr\n{}",
            r.status,
            r.stdout,
            r.stderr
        );
        print!(
            "{cell}, {:.1} s: {}",
            start.elapsed().as_secs_f64(),
            r.stdout
        );
    }
}

/// noauxv.c's exit status when it cannot start a program without the vDSO.
const NOAUXV_CANNOT: i32 = 125;

/// tests/c/noauxv.c, built once per test process with the target's compiler.
fn noauxv() -> Result<PathBuf, String> {
    static LAUNCHER: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    LAUNCHER
        .get_or_init(|| {
            if !cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
                return Err("the launcher reads x86 registers only".to_string());
            }
            let exe = super::scratch("noauxv").join("noauxv");
            cc_with(
                c_compiler(),
                &[crate_dir().join("tests/c/noauxv.c")],
                &exe,
                &[],
            );
            Ok(exe)
        })
        .clone()
}

/// The valgrind command for `program`, or why valgrind cannot run it here.
///
/// For `-static` glibc programs memcheck's check of undefined values is off: memcheck
/// takes memory from `brk` as undefined, though the kernel zeroes it, and static glibc
/// puts the thread-local storage of the main thread there, so every read of a
/// thread-local variable (glibc's own, and libvdsotime's) is reported, in any static
/// program. Every access is still checked for addressability.
fn valgrind(program: &Program) -> Result<Command, String> {
    if !cfg!(target_arch = "x86_64") {
        return Err("the valgrind cells run x86-64 programs only".to_string());
    }
    let found = Command::new("valgrind").arg("--version").output();
    if !found.is_ok_and(|o| o.status.success()) {
        return Err("valgrind is not installed".to_string());
    }
    let mut cmd = if program.env.is_empty() {
        Command::new("valgrind")
    } else {
        // The tool itself, with the environment: the `valgrind` launcher is a glibc
        // program (behind a shell script on Debian), which a musl preload in its
        // environment stops.
        let mut tool = Command::new(memcheck_tool()?);
        tool.env("VALGRIND_LAUNCHER", "valgrind")
            .envs(program.env.iter().map(|(k, v)| (k, v)));
        tool
    };
    cmd.args(["--quiet", "--error-exitcode=1"]).arg(format!(
        "--suppressions={}",
        crate_dir().join("tests/c/link_matrix.supp").display()
    ));
    if program.static_glibc {
        cmd.arg("--undef-value-errors=no");
    }
    cmd.arg(&program.exe);
    Ok(cmd)
}

/// The path of valgrind's memcheck tool, as its launcher reports it (`-d`).
fn memcheck_tool() -> Result<PathBuf, String> {
    static TOOL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    TOOL.get_or_init(|| {
        let out = Command::new("valgrind")
            .args(["-d", "--tool=memcheck", "true"])
            .output()
            .map_err(|e| format!("cannot run valgrind: {e}"))?;
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .find_map(|l| l.split("launcher launching ").nth(1))
            .map(|path| PathBuf::from(path.trim()))
            .ok_or_else(|| "valgrind -d names no tool it launches".to_string())
    })
    .clone()
}

/// `NAME=VALUE` arguments for env(1) or noauxv.
fn pairs(env: &[(&'static str, OsString)]) -> Vec<OsString> {
    env.iter()
        .map(|(key, value)| {
            let mut pair = OsString::from(format!("{key}="));
            pair.push(value);
            pair
        })
        .collect()
}
