//! Shared by the tests that build C programs: where cargo put the libraries, installing them
//! with install.sh into a scratch prefix, compiling with the machine's `cc`, running.

#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

mod compiler;
pub use compiler::{c_compiler, c_compiler_words};
pub mod matrix;
pub mod musl;

mod program;
pub use program::run;

/// The core's visible-skip helper (`SKIP <test>: <reason>`, or a failure where
/// `VDSOTIME_REQUIRE` names the requirement).
#[path = "../../../vdsotime/tests/support/skip.rs"]
pub mod skip;

/// The core's runner of test processes: a time limit that kills the whole process group.
#[allow(clippy::duplicate_mod)] // c_random.rs has the core's getrandom_common too
#[path = "../../../vdsotime/tests/support/process.rs"]
pub mod process;

/// The limit for one program (a compiler, a C test program): far above what any takes,
/// also under an emulator.
pub const LIMIT: Duration = Duration::from_secs(300);

/// Where cargo put the library this test run was built with: target/<profile>/deps, the
/// directory of the test executable (`cargo test` builds the library there and does not copy
/// it up to target/<profile>, which may hold an older `cargo build`).
pub fn build_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let dir = exe
        .parent()
        .expect("test executable has a directory")
        .to_path_buf();
    assert!(
        dir.join("libvdsotime_c.so").is_file() && dir.join("libvdsotime_c.a").is_file(),
        "libvdsotime_c.so/.a not found in {} (cargo builds them with the tests)",
        dir.display()
    );
    dir
}

/// A fresh scratch directory for one test, under target/<profile>.
pub fn scratch(name: &str) -> PathBuf {
    let profile = build_dir()
        .parent()
        .expect("deps has a parent")
        .to_path_buf();
    let dir = profile.join("vdsotime-c-tests").join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs a command, panicking with its output if it fails or outlives [`LIMIT`].
pub fn run_ok(cmd: &mut Command) -> Output {
    let out = process::output(cmd, LIMIT);
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Installs the libraries this test run was built with (the preload too: it is a
/// dev-dependency) with install.sh into `prefix`, keeping their debug information: the
/// machine's `strip` may not read another architecture's libraries (`cargo xtask cross`).
pub fn install(prefix: &Path) {
    install_from(&build_dir(), prefix, &["--no-strip"]);
}

/// Runs install.sh with `--from from --prefix prefix` and `extra` arguments; returns what it
/// printed.
pub fn install_from(from: &Path, prefix: &Path, extra: &[&str]) -> String {
    let out = run_ok(
        Command::new("sh")
            .arg(crate_dir().join("install.sh"))
            .arg("--prefix")
            .arg(prefix)
            .arg("--from")
            .arg(from)
            .args(extra)
            .env_remove("DESTDIR"),
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The compiler and linker flags of an installed .pc file, through pkg-config when the machine
/// has it, else through a reader of the few .pc features install.sh writes.
pub fn pkg_config(prefix: &Path, package: &str) -> Vec<String> {
    pkg_config_with(prefix, package, false)
}

/// [`pkg_config`] with `--static`, as for a static link: `Libs.private` too.
pub fn pkg_config_static(prefix: &Path, package: &str) -> Vec<String> {
    pkg_config_with(prefix, package, true)
}

fn pkg_config_with(prefix: &Path, package: &str, static_link: bool) -> Vec<String> {
    let pc_dir = prefix.join("lib/pkgconfig");
    let mut tool = Command::new("pkg-config");
    if static_link {
        tool.arg("--static");
    }
    let via_tool = process::run(
        tool.args(["--cflags", "--libs", package])
            .env("PKG_CONFIG_PATH", &pc_dir)
            .env("PKG_CONFIG_LIBDIR", &pc_dir),
        LIMIT,
    );
    match via_tool {
        Ok(out) => {
            assert!(
                out.status.success(),
                "pkg-config {package}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout)
                .expect("utf-8")
                .split_whitespace()
                .map(String::from)
                .collect()
        }
        Err(process::Error::Spawn(_)) => {
            read_pc(&pc_dir.join(format!("{package}.pc")), static_link)
        }
        Err(hung) => panic!("{hung}"),
    }
}

/// Expands `${var}` references and returns the Cflags and Libs (and with `private`,
/// Libs.private) words of a .pc file.
fn read_pc(path: &Path, private: bool) -> Vec<String> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut vars: Vec<(String, String)> = Vec::new();
    let expand = |s: &str, vars: &[(String, String)]| {
        let mut s = s.to_string();
        for (k, v) in vars.iter().rev() {
            s = s.replace(&format!("${{{k}}}"), v);
        }
        s
    };
    let (mut cflags, mut libs, mut libs_private) = (String::new(), String::new(), String::new());
    for line in text.lines() {
        if let Some((k, v)) = line.split_once('=').filter(|(k, _)| !k.contains(':')) {
            let v = expand(v.trim(), &vars);
            vars.push((k.trim().to_string(), v));
        } else if let Some(v) = line.strip_prefix("Cflags:") {
            cflags = expand(v, &vars);
        } else if let Some(v) = line.strip_prefix("Libs:") {
            libs = expand(v, &vars);
        } else if let Some(v) = line.strip_prefix("Libs.private:").filter(|_| private) {
            libs_private = expand(v, &vars);
        }
    }
    format!("{cflags} {libs} {libs_private}")
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// Compiles C `sources` into `output` with the warnings we hold the C code to.
pub fn cc(sources: &[PathBuf], output: &Path, flags: &[String]) {
    cc_with(c_compiler(), sources, output, flags);
}

/// [`cc`] with another compiler command.
pub fn cc_with(mut cmd: Command, sources: &[PathBuf], output: &Path, flags: &[String]) {
    cmd.args(["-std=gnu11", "-O2", "-g", "-Wall", "-Wextra", "-Werror"])
        .args(sources)
        .arg("-o")
        .arg(output)
        .args(flags);
    run_ok(&mut cmd);
}

/// The dynamic section entries (`readelf -d`) of an ELF file.
pub fn dynamic_section(file: &Path) -> String {
    let out = run_ok(Command::new("readelf").arg("-d").arg(file));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The Rust toolchain's own unwinder for a musl `triple` (`libunwind.a`, beside its
/// self-contained C runtime files), or why there is none.
pub fn rust_unwinder(triple: &str) -> Result<PathBuf, String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| format!("cannot run rustc: {e}"))?;
    let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let unwinder = Path::new(&sysroot)
        .join("lib/rustlib")
        .join(triple)
        .join("lib/self-contained/libunwind.a");
    if unwinder.is_file() {
        Ok(unwinder)
    } else {
        Err(format!(
            "{} not found: the Rust standard library for {triple} is not installed \
             (rustup target add {triple})",
            unwinder.display()
        ))
    }
}

/// What a link against the static archive adds to vdsotime-static.pc's flags. On musl, an
/// unwinder for the Rust standard library inside the archive: these tests build musl
/// programs with glibc's gcc and musl's specs file, whose libgcc_eh needs glibc, so Rust's
/// own libunwind.a for the target serves (a musl-targeted gcc's libgcc_eh would too).
pub fn archive_link_extra() -> Vec<String> {
    if !cfg!(target_env = "musl") {
        return Vec::new();
    }
    let arch = match std::env::consts::ARCH {
        "x86" => "i686",
        arch => arch,
    };
    let unwinder = rust_unwinder(&format!("{arch}-unknown-linux-musl"))
        .unwrap_or_else(|why| panic!("a musl build of these tests without its unwinder: {why}"));
    let mut extra = vec![unwinder.display().to_string()];
    if arch == "i686" {
        // i386's libunwind.a is built with the stack protector, whose PIC helper
        // (__stack_chk_fail_local) comes from gcc's libssp_nonshared.
        extra.push("-lssp_nonshared".to_string());
    }
    extra
}
