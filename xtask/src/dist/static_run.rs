//! The static tarballs, unpacked and run: the x86_64 tool on this machine, the aarch64
//! one under QEMU user mode (binfmt_misc). Each must start with no library from the system.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::apt;
use crate::dist::tarball::INSTALL_PREFIX;

/// Unpacks each target's tarball from `out` into `work` and runs `vdsotime --version` (which
/// must name `version` and the `source` it was built from) and `vdsotime check` from it.
pub fn run(
    out: &Path,
    version: &str,
    source: &str,
    targets: &[&str],
    work: &Path,
    log: &Path,
) -> Result<(), String> {
    for target in targets {
        let name = format!("vdsotime-{version}-{target}");
        let dir = work.join("static-run");
        fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut tar = Command::new("tar");
        tar.arg("-xzf")
            .arg(out.join(format!("{name}.tar.gz")))
            .arg("-C")
            .arg(&dir);
        apt::logged(tar, log, "tar -x")?;
        let tool = dir.join(&name).join("bin/vdsotime");
        let said = Command::new(&tool)
            .arg("--version")
            .output()
            .map_err(|e| format!("{}: {e}", tool.display()))?;
        let said = String::from_utf8_lossy(&said.stdout).trim().to_string();
        let expected = format!("vdsotime {version}\nsource: {source}");
        if said != expected {
            return Err(format!(
                "{target}: `vdsotime --version` said {said:?}, not {expected:?}"
            ));
        }
        let mut check = Command::new(&tool);
        check.arg("check");
        apt::logged(check, log, &format!("vdsotime check ({target})"))?;
        let man = dir.join(&name).join("share/man/man1/vdsotime.1");
        if !man.is_file() {
            return Err(format!("{target}: the tarball has no {}", man.display()));
        }
        let notices = dir.join(&name).join("share/doc/vdsotime/copyright");
        let text = fs::read_to_string(&notices).unwrap_or_default();
        if !text.contains("Files: musl/*") || !text.contains("Files: cargo-registry/clap-") {
            return Err(format!(
                "{target}: {} lacks the linked crates' or musl's notices",
                notices.display()
            ));
        }
        units_name_installed_paths(out, &name, &dir.join("usr-local"), log)?;
        println!(
            "{target}: {}, `vdsotime check` passed, man pages, completions and notices present, the units name installed paths",
            said.replace('\n', "; ")
        );
    }
    Ok(())
}

/// Unpacks the tarball `name` as documented (`--strip-components=1`) into `root`, which
/// stands for /usr/local, and checks that every path its service unit names under
/// /usr/local (the program of `ExecStart=` and `ExecStartPost=`, the `file:` pages of
/// `Documentation=`) is there.
fn units_name_installed_paths(
    out: &Path,
    name: &str,
    root: &Path,
    log: &Path,
) -> Result<(), String> {
    fs::create_dir_all(root).map_err(|e| format!("{}: {e}", root.display()))?;
    let mut tar = Command::new("tar");
    tar.arg("-xzf")
        .arg(out.join(format!("{name}.tar.gz")))
        .arg("-C")
        .arg(root)
        .arg("--strip-components=1");
    apt::logged(tar, log, "tar -x --strip-components=1")?;
    let unit_path = root.join("lib/systemd/system/vdsotime-doctor.service");
    let unit = fs::read_to_string(&unit_path)
        .map_err(|e| format!("{name}: {}: {e}", unit_path.display()))?;
    let missing = missing_paths(&unit, root);
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{name}: vdsotime-doctor.service names paths that `tar -C {INSTALL_PREFIX} --strip-components=1` does not install: {missing:?}"
        ))
    }
}

/// The paths `unit` names (programs, `file:` documentation) that are not under
/// INSTALL_PREFIX or not in `root`, which stands for it.
fn missing_paths(unit: &str, root: &Path) -> Vec<String> {
    let mut named: Vec<&str> = Vec::new();
    for line in unit.lines() {
        if let Some((key, value)) = line.split_once('=') {
            match key {
                "ExecStart" | "ExecStartPost" => {
                    let program = value.trim_start_matches(['+', '-', '@', '!', ':']);
                    named.extend(program.split_whitespace().next());
                }
                "Documentation" => named.extend(
                    value
                        .split_whitespace()
                        .filter_map(|d| d.strip_prefix("file:")),
                ),
                _ => {}
            }
        }
    }
    named
        .into_iter()
        .filter(|p| {
            let inside = p
                .strip_prefix(INSTALL_PREFIX)
                .and_then(|rest| rest.strip_prefix('/'));
            !inside.is_some_and(|rest| root.join(rest).exists())
        })
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unit_naming_paths_outside_the_install_is_caught() {
        let root = std::env::temp_dir().join(format!("xtask-units-{}", std::process::id()));
        fs::create_dir_all(root.join("bin")).unwrap();
        fs::create_dir_all(root.join("share/doc/vdsotime")).unwrap();
        fs::write(root.join("bin/vdsotime"), "").unwrap();
        fs::write(root.join("share/doc/vdsotime/fleet.md"), "").unwrap();
        let good =
            "Documentation=man:vdsotime-doctor(1) file:/usr/local/share/doc/vdsotime/fleet.md\n\
                    ExecStart=/usr/local/bin/vdsotime doctor\n\
                    ExecStartPost=+/usr/local/bin/vdsotime doctor --install-metrics a\n";
        assert!(missing_paths(good, &root).is_empty());
        let bad = "Documentation=file:/usr/local/share/doc/vdsotime/doctor.md\n\
                   ExecStart=/vdsotime-0.1.0-x86_64-unknown-linux-musl/bin/vdsotime doctor\n";
        assert_eq!(
            missing_paths(bad, &root),
            [
                "/usr/local/share/doc/vdsotime/doctor.md",
                "/vdsotime-0.1.0-x86_64-unknown-linux-musl/bin/vdsotime"
            ]
        );
        fs::remove_dir_all(&root).unwrap();
    }
}
