//! The fresh-root tests: for each Debian release, `mmdebstrap` makes a minimal root file
//! system (minbase, plus what the test uses: a C compiler, pkg-config, man-db) from the
//! machine's own Debian mirror while the packages build, then copies them in and runs
//! scripts/dist/in-fresh-root.sh inside it (install, use, purge). The root is thrown away
//! (target `/dev/null`). The arm64 root runs under QEMU user mode and gets no C compiler
//! (emulated, installing and running gcc would cost minutes): its quick-start programs are
//! cross-built here against the arm64 packages' own files.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use crate::{apt, toolchain};

use super::debian::DebArch;

/// One root to make and test in.
#[derive(Debug, Clone)]
pub struct Root {
    pub suite: &'static str,
    pub arch: DebArch,
}

impl Root {
    fn name(&self) -> String {
        format!("{}-{}", self.suite, self.arch.name)
    }
}

/// The `mmdebstrap` command for `root`. Its last hooks wait until `dir` holds the packages
/// and the test (the file `ready`; `abort` ends it), copy them in and run the test: the
/// root is made while the packages build.
fn mmdebstrap(root: &Root, dir: &Path, codename: &str) -> Result<Command, String> {
    let (uris, key) = apt::release_source(codename)?;
    let options = key.map_or(String::new(), |k| format!("[signed-by={k}] "));
    let inside = "/tmp/vdsotime-dist";
    let native = root.arch.qemu.is_none();
    let include = if native {
        "gcc,libc6-dev,pkg-config,man-db"
    } else {
        "man-db"
    };
    let d = dir.display();
    let mut cmd = Command::new("mmdebstrap");
    cmd.args(["--quiet", "--variant=minbase", "--mode=root"])
        .arg(format!("--architectures={}", root.arch.name))
        .arg(format!("--include={include}"))
        .arg(format!(
            "--customize-hook=until [ -e {d}/ready ]; do [ ! -e {d}/abort ] || exit 1; sleep 1; done"
        ))
        .arg(format!(
            "--customize-hook=mkdir -p \"$1{inside}\" && cp {d}/*.deb {d}/*.sh {d}/quickstart* \"$1{inside}/\""
        ))
        .arg(format!(
            "--customize-hook=chroot \"$1\" sh {inside}/in-fresh-root.sh {inside}{}",
            if native { "" } else { " --no-cc" }
        ))
        .arg(root.suite)
        .arg("/dev/null");
    for uri in &uris {
        cmd.arg(format!("deb {options}{uri} {} main", root.suite));
    }
    Ok(cmd)
}

/// Cross-builds the README's quick start for a foreign root, against the packages' own
/// header and libraries (unpacked into `work`): `quickstart-shared` and `quickstart-static`.
fn cross_quickstart(
    arch: DebArch,
    debs: &[PathBuf],
    source: &Path,
    into: &Path,
    work: &Path,
    log: &Path,
) -> Result<(), String> {
    let sysroot = work.join(format!("unpacked-{}", arch.name));
    for deb in debs {
        let mut x = Command::new("dpkg-deb");
        x.arg("-x").arg(deb).arg(&sysroot);
        apt::logged(x, log, "dpkg-deb -x")?;
    }
    let lib = sysroot.join("usr/lib").join(arch.gnu);
    let include = sysroot.join("usr/include");
    // Linked as `cargo xtask cross` links: clang driving Rust's lld, Debian's cross libc.
    let gcc_ld = toolchain::rust_tool("gcc-ld")?;
    let clang = |out: &str, extra: &[&str]| {
        let mut cmd = Command::new("clang");
        cmd.arg(format!("--target={}", arch.gnu))
            .args(["-fuse-ld=lld", "-O2"])
            .arg(format!("-B{}", gcc_ld.display()))
            .arg(source)
            .arg("-I")
            .arg(&include)
            .args(extra)
            .arg("-o")
            .arg(into.join(out));
        cmd
    };
    let shared = clang(
        "quickstart-shared",
        &[&format!("-L{}", lib.display()), "-lvdsotime"],
    );
    apt::logged(shared, log, "clang (shared quick start)")?;
    let archive = lib.join("libvdsotime.a").display().to_string();
    let stat = clang(
        "quickstart-static",
        &[
            "-static",
            &archive,
            "-lutil",
            "-lrt",
            "-lpthread",
            "-lm",
            "-ldl",
            "-lc",
        ],
    );
    apt::logged(stat, log, "clang (static quick start)")
}

/// The roots being made, each waiting for its packages.
#[derive(Debug)]
pub struct Started {
    roots: Vec<(Root, Child, PathBuf, PathBuf, Instant)>,
}

/// Starts making every root (mostly downloads and dpkg, while the packages build); each
/// root's output goes to `logs/fresh-root-<suite>-<arch>.log`.
pub fn start(roots: &[Root], work: &Path, logs: &Path) -> Result<Started, String> {
    let codename = apt::codename().ok_or("no VERSION_CODENAME in /etc/os-release")?;
    let mut started = Started { roots: Vec::new() };
    for root in roots {
        let dir = work.join(format!("fresh-root-{}", root.name()));
        if dir.exists() {
            fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let log = logs.join(format!("fresh-root-{}.log", root.name()));
        let file = fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = file.try_clone().map_err(|e| e.to_string())?;
        let child = mmdebstrap(root, &dir, &codename)?
            .stdin(Stdio::null())
            .stdout(file)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("mmdebstrap: {e}"))?;
        println!("fresh root {}: being made (mmdebstrap)", root.name());
        started
            .roots
            .push((root.clone(), child, dir, log, Instant::now()));
    }
    Ok(started)
}

impl Drop for Started {
    /// Roots never given their packages (the build failed) end rather than wait forever.
    fn drop(&mut self) {
        for (_, child, dir, _, _) in &mut self.roots {
            let _ = fs::write(dir.join("abort"), "");
            let _ = child.wait();
        }
    }
}

/// Gives each started root its packages (`debs` maps each architecture to its own), the
/// test and the quick start, and waits for every test's verdict.
pub fn finish(
    mut started: Started,
    root_dir: &Path,
    debs: &[(DebArch, Vec<PathBuf>)],
    work: &Path,
) -> Result<(), String> {
    let source = root_dir.join("examples/c/quickstart.c");
    for (root, _, dir, log, _) in &started.roots {
        let own: &[PathBuf] = debs
            .iter()
            .find(|(a, _)| a.name == root.arch.name)
            .map_or(&[], |(_, d)| d);
        if own.is_empty() {
            return Err(format!("no {} packages to test", root.arch.name));
        }
        let mut files: Vec<PathBuf> = own.to_vec();
        files.push(root_dir.join("scripts/dist/in-fresh-root.sh"));
        files.push(source.clone());
        for f in &files {
            let name = f.file_name().unwrap_or_default();
            fs::copy(f, dir.join(name)).map_err(|e| format!("{}: {e}", f.display()))?;
        }
        let commands = dir.join("readme-c.sh");
        fs::write(&commands, readme_package_commands(root_dir)?)
            .map_err(|e| format!("{}: {e}", commands.display()))?;
        if root.arch.qemu.is_some() {
            cross_quickstart(root.arch, own, &source, dir, work, log)?;
        }
        fs::write(dir.join("ready"), "").map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let mut failures = Vec::new();
    for (root, mut child, _, log, start) in started.roots.drain(..) {
        let status = child.wait().map_err(|e| format!("mmdebstrap: {e}"))?;
        let text = fs::read_to_string(&log).unwrap_or_default();
        for line in text
            .lines()
            .filter(|l| l.starts_with("ok: ") || l.starts_with("== "))
        {
            println!("  {}: {line}", root.name());
        }
        let secs = start.elapsed().as_secs();
        if status.success() && text.contains("PASS: fresh root") {
            println!(
                "fresh root {}: PASS ({secs} s since it was started)",
                root.name()
            );
        } else {
            for line in text
                .lines()
                .rev()
                .take(15)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
            {
                println!("  {}| {line}", root.name());
            }
            println!(
                "fresh root {}: FAIL ({status}, see {})",
                root.name(),
                log.display()
            );
            failures.push(root.name());
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!("fresh-root test failed in {}", failures.join(", ")))
    }
}

/// The README's commands that build the C quick start with the packages installed: its sh
/// block that links through pkg-config without setting PKG_CONFIG_PATH (that one is the
/// prefix install's, tested by crates/vdsotime-c/tests/install.rs).
fn readme_package_commands(root_dir: &Path) -> Result<String, String> {
    let path = root_dir.join("README.md");
    let readme = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    package_block(&readme).map(String::from).ok_or_else(|| {
        "README.md has no sh block building the C quick start with the packages".into()
    })
}

/// See [`readme_package_commands`].
fn package_block(readme: &str) -> Option<&str> {
    readme
        .split("```sh\n")
        .skip(1)
        .filter_map(|b| b.split_once("```").map(|(code, _)| code))
        .find(|code| {
            code.contains("pkg-config --cflags --libs vdsotime)")
                && !code.contains("PKG_CONFIG_PATH")
                && !code.contains("rpath")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_readme_has_the_package_commands_of_the_c_quick_start() {
        let readme =
            fs::read_to_string(toolchain::workspace_root().join("README.md")).expect("README.md");
        let block = package_block(&readme).expect("the package block");
        let builds: Vec<&str> = block.lines().filter(|l| l.starts_with("cc ")).collect();
        assert_eq!(builds.len(), 2, "{block}");
        assert!(builds.iter().any(|l| l.contains(" -static ")), "{block}");
    }
}
