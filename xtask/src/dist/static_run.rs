//! The static tarballs, unpacked and run: the x86_64 tool on this machine, the aarch64
//! one under QEMU user mode (binfmt_misc). Each must start with no library from the system.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::apt;

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
        println!(
            "{target}: {}, `vdsotime check` passed, man pages, completions and notices present",
            said.replace('\n', "; ")
        );
    }
    Ok(())
}
