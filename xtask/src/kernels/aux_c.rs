//! The auxiliary clocks through the C API and the preload, for a machine whose kernel has
//! them: crates/vdsotime-c/tests/c/aux_clocks.c built on this host twice,
//!
//! - static, with Debian's musl-gcc, against libvdsotime.a built for
//!   x86_64-unknown-linux-musl (and Rust's own libunwind.a for the standard library
//!   inside it, as the musl cells of the C link matrix do): `vdsotime_clock_gettime`;
//! - dynamic, with gcc against this host's glibc, calling the C library's `clock_gettime`,
//!   run inside with `LD_PRELOAD=libvdsotime_preload.so` (built for this host). glibc's
//!   dynamic linker and the libraries `ldd` lists for the program and the preload go into
//!   the initramfs at their paths.
//!
//! The machine has no C compiler: only these files go in.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use super::build;
use super::kernel::Unbootable;

/// What building them needs besides gcc (Debian packages).
pub const PACKAGES: &[&str] = &["musl-tools"];

/// The C test program, from the workspace root.
const SOURCE: &str = "crates/vdsotime-c/tests/c/aux_clocks.c";
/// Where the preload is installed inside (where Debian's package installs it).
pub const PRELOAD_INSIDE: &str = "/usr/lib/x86_64-linux-gnu/libvdsotime_preload.so";
const MUSL: &str = "x86_64-unknown-linux-musl";

/// What the machine gets.
#[derive(Debug)]
pub struct AuxPrograms {
    /// Static, calling libvdsotime's functions.
    pub c_api: PathBuf,
    /// Dynamic (glibc), calling the C library's functions, for the preload to serve.
    pub via_preload: PathBuf,
    pub preload: PathBuf,
    /// The files the dynamic program and the preload load, each at its path on this host.
    pub runtime: Vec<PathBuf>,
}

/// The programs in `slot`, built there the first time a machine needs them (under
/// `work`, saying how long that took); a failure fails every machine that needs them.
pub fn built_once<'a>(
    slot: &'a mut Option<Result<AuxPrograms, Unbootable>>,
    root: &Path,
    work: &Path,
) -> Result<&'a AuxPrograms, Unbootable> {
    let built = slot.get_or_insert_with(|| {
        let logs = work.join("logs");
        let _ = std::fs::create_dir_all(&logs);
        println!("kernels: building the auxiliary clocks' C programs...");
        let started = Instant::now();
        let built = build(root, &work.join("aux-c"), &logs.join("aux-c.build.log"));
        let secs = started.elapsed().as_secs();
        println!("kernels: built the auxiliary clocks' C programs in {secs} s");
        built.map_err(Unbootable::Failed)
    });
    built.as_ref().map_err(Clone::clone)
}

/// Builds both programs and the preload into `dir`; cargo's output goes to `log`.
pub fn build(root: &Path, dir: &Path, log: &Path) -> Result<AuxPrograms, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // Only the static archive: the musl target cannot build vdsotime-c's cdylib.
    let archive = build::library(
        root,
        log,
        &[
            "rustc",
            "-p",
            "vdsotime-c",
            "--lib",
            "--crate-type",
            "staticlib",
            "--target",
            MUSL,
        ],
        ".a",
    )?;
    let preload = build::library(
        root,
        log,
        &["build", "-p", "vdsotime-preload", "--lib"],
        ".so",
    )?;
    let source = root.join(SOURCE);
    let includes = [
        root.join("crates/vdsotime-c/tests/c"),
        root.join("crates/vdsotime-c/include"),
    ];
    let c_api = dir.join("aux_clocks_c");
    let mut musl = cc("musl-gcc", &source, &includes, &c_api);
    musl.arg("-static").arg(&archive).arg(unwinder()?);
    run(musl)?;
    let via_preload = dir.join("aux_clocks_preload");
    let mut gcc = cc("gcc", &source, &includes, &via_preload);
    gcc.arg("-DVIA_LIBC");
    run(gcc)?;
    let mut runtime = ldd(&via_preload)?;
    for f in ldd(&preload)? {
        if !runtime.contains(&f) {
            runtime.push(f);
        }
    }
    Ok(AuxPrograms {
        c_api,
        via_preload,
        preload,
        runtime,
    })
}

/// `compiler -O2 -Wall -Werror -I... source -o out`.
fn cc(compiler: &str, source: &Path, includes: &[PathBuf], out: &Path) -> Command {
    let mut cmd = Command::new(compiler);
    cmd.args(["-O2", "-Wall", "-Wextra", "-Werror"]);
    for dir in includes {
        cmd.arg("-I").arg(dir);
    }
    cmd.arg(source).arg("-o").arg(out);
    cmd
}

fn run(mut cmd: Command) -> Result<(), String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Rust's libunwind.a for musl, which the standard library inside libvdsotime.a needs:
/// musl-gcc's libgcc_eh is glibc's.
fn unwinder() -> Result<PathBuf, String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| format!("rustc: {e}"))?;
    let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let path =
        Path::new(&sysroot).join(format!("lib/rustlib/{MUSL}/lib/self-contained/libunwind.a"));
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "{} not found (rustup target add {MUSL})",
            path.display()
        ))
    }
}

/// The files `ldd` says `file` loads: the libraries and the dynamic linker.
fn ldd(file: &Path) -> Result<Vec<PathBuf>, String> {
    let out = Command::new("ldd")
        .arg(file)
        .output()
        .map_err(|e| format!("ldd: {e}"))?;
    if !out.status.success() {
        return Err(format!("ldd {} failed", file.display()));
    }
    Ok(loaded(&String::from_utf8_lossy(&out.stdout)))
}

/// `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)` and
/// `/lib64/ld-linux-x86-64.so.2 (0x...)` give their paths; the vDSO has none.
fn loaded(ldd: &str) -> Vec<PathBuf> {
    ldd.lines()
        .filter_map(|l| {
            let l = l.trim();
            let path = l.split_once("=> ").map_or(l, |(_, p)| p);
            let path = path.split(" (").next()?.trim();
            path.starts_with('/').then(|| PathBuf::from(path))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldd_lines_give_the_files_loaded() {
        let text = "\tlinux-vdso.so.1 (0x00007ffd)\n\
                    \tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f00)\n\
                    \t/lib64/ld-linux-x86-64.so.2 (0x00007f11)\n";
        assert_eq!(
            loaded(text),
            [
                PathBuf::from("/lib/x86_64-linux-gnu/libc.so.6"),
                PathBuf::from("/lib64/ld-linux-x86-64.so.2"),
            ]
        );
    }
}
