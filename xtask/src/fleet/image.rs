//! The fleet machine's disk: the cached root unpacked, the project's Debian packages
//! installed into it with `dpkg -i` (as an operator installs them), the test's own files
//! added, and the whole written into an ext4 image (`mkfs.ext4 -d`) that both boots use
//! read-only (QEMU's `snapshot=on`: each boot starts from the same disk).
//!
//! The test's files are the only changes to Debian's and the project's: a drop-in that
//! shortens vdsotime-doctor.timer's schedule (the shipped timer file stays), Prometheus'
//! configuration (shorter scrape and evaluation intervals, the shortened rules), the guest
//! script and its unit, and an SSH host key for the sandbox probes to try.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::rules;
use crate::apt;

/// The timer's interval in the machine (seconds): a doctor run under TCG takes seconds.
pub const INTERVAL: u64 = 30;
/// Prometheus' scrape and evaluation interval in the machine (seconds).
pub const SCRAPE: u64 = 5;
/// Every `for:` of the loaded rules copy is cut to this (seconds).
pub const FOR: u64 = 15;

/// What a boot needs: the disk and Debian's kernel and initrd from it.
#[derive(Debug)]
pub struct Disk {
    pub image: PathBuf,
    pub kernel: PathBuf,
    pub initrd: PathBuf,
    /// `uname -r` of the kernel, from its file name.
    pub release: String,
}

/// The drop-in that shortens only the timer's schedule.
fn timer_dropin() -> String {
    // An empty OnBootSec= resets every monotonic and calendar setting of the timer at once:
    // one reset, then both settings (a second reset would drop the first).
    format!(
        "# cargo xtask fleet: runs the doctor every {INTERVAL} s instead of every 5 minutes.\n\
         [Timer]\nOnBootSec=\nOnBootSec=5s\nOnUnitActiveSec={INTERVAL}s\n\
         RandomizedDelaySec=0\nAccuracySec=1s\n"
    )
}

/// Prometheus scraping Debian's node_exporter (job `node`, as in Debian's own
/// configuration) with the shortened rules.
fn prometheus_yml() -> String {
    format!(
        "# cargo xtask fleet: Debian's scrape of node_exporter, faster, with vdsotime's rules.\n\
         global:\n  scrape_interval: {SCRAPE}s\n  evaluation_interval: {SCRAPE}s\n\
         rule_files:\n  - /etc/prometheus/vdsotime.rules.yml\n\
         scrape_configs:\n  - job_name: node\n    static_configs:\n      - targets: ['localhost:9100']\n"
    )
}

const GUEST_UNIT: &str = "[Unit]\n\
Description=vdsotime fleet test (cargo xtask fleet)\n\
After=prometheus.service prometheus-node-exporter.service\n\
[Service]\nType=exec\nExecStart=/usr/local/lib/vdsotime-fleet/guest.sh\n\
StandardOutput=journal+console\nStandardError=journal+console\n\
[Install]\nWantedBy=multi-user.target\n";

fn write(root: &Path, path: &str, text: &str, mode: u32) -> Result<(), String> {
    let to = root.join(path.trim_start_matches('/'));
    if let Some(dir) = to.parent() {
        fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    fs::write(&to, text).map_err(|e| format!("{}: {e}", to.display()))?;
    fs::set_permissions(&to, fs::Permissions::from_mode(mode))
        .map_err(|e| format!("{}: {e}", to.display()))
}

fn chroot(root: &Path, args: &[&str], log: &Path) -> Result<(), String> {
    let mut cmd = Command::new("chroot");
    cmd.arg(root).args(args);
    apt::logged(cmd, log, &format!("chroot {}", args.join(" ")))
}

/// The test's files and settings in the unpacked `root`.
fn configure(root: &Path, repo: &Path, rules: &str, log: &Path) -> Result<(), String> {
    write(
        root,
        "/etc/fstab",
        "/dev/vda / ext4 rw,relatime 0 1\n",
        0o644,
    )?;
    write(root, "/etc/hostname", "fleet\n", 0o644)?;
    write(root, "/etc/hosts", "127.0.0.1 localhost fleet\n", 0o644)?;
    let dropin = "/etc/systemd/system/vdsotime-doctor.timer.d/fleet-test.conf";
    write(root, dropin, &timer_dropin(), 0o644)?;
    write(
        root,
        "/etc/prometheus/prometheus.yml",
        &prometheus_yml(),
        0o644,
    )?;
    write(root, "/etc/prometheus/vdsotime.rules.yml", rules, 0o644)?;
    // No SSH server in the machine: a host key where sshd keeps it, with sshd's mode.
    write(
        root,
        "/etc/ssh/ssh_host_ed25519_key",
        "cargo xtask fleet: a secret only root may read\n",
        0o600,
    )?;
    let lib = "/usr/local/lib/vdsotime-fleet";
    for script in ["guest.sh", "probe.sh"] {
        let from = repo.join("xtask/fleet").join(script);
        let text = fs::read_to_string(&from).map_err(|e| format!("{}: {e}", from.display()))?;
        write(root, &format!("{lib}/{script}"), &text, 0o755)?;
    }
    let longest = rules::longest_for(rules);
    let settings = format!("INTERVAL={INTERVAL}\nSCRAPE={SCRAPE}\nLONGEST_FOR={longest}\n");
    write(root, &format!("{lib}/settings"), &settings, 0o644)?;
    write(
        root,
        "/etc/systemd/system/vdsotime-fleet-guest.service",
        GUEST_UNIT,
        0o644,
    )?;
    chroot(
        root,
        &["systemctl", "enable", "vdsotime-fleet-guest.service"],
        log,
    )?;
    // A root file system made outside the machine has no machine ID: the first boot's
    // questions (systemd-firstboot) would wait on the console.
    chroot(
        root,
        &["systemctl", "mask", "systemd-firstboot.service"],
        log,
    )?;
    // /etc and /var are as new as /usr: the first boot need not rebuild the linker and
    // journal catalogs (ConditionNeedsUpdate=), minutes under TCG.
    chroot(root, &["/usr/lib/systemd/systemd-update-done"], log)
}

/// The file in `dir` whose name starts with `prefix`.
fn one_named(dir: &Path, prefix: &str) -> Result<PathBuf, String> {
    fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
        })
        .ok_or_else(|| format!("no {prefix}* in {}", dir.display()))
}

/// Makes the disk in `work` from the root tarball, the packages and the rules copy.
pub fn make(
    tar: &Path,
    debs: &[PathBuf],
    repo: &Path,
    rules: &str,
    work: &Path,
    log: &Path,
) -> Result<Disk, String> {
    let root = work.join("root");
    let mut untar = Command::new("tar");
    untar.arg("-xpf").arg(tar).arg("-C").arg(&root);
    fs::create_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    apt::logged(untar, log, "tar -x (the root)")?;
    let inside = root.join("tmp/vdsotime-debs");
    fs::create_dir_all(&inside).map_err(|e| format!("{}: {e}", inside.display()))?;
    let mut names = Vec::new();
    for deb in debs {
        let name = deb
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        fs::copy(deb, inside.join(&name)).map_err(|e| format!("{}: {e}", deb.display()))?;
        names.push(format!("/tmp/vdsotime-debs/{name}"));
    }
    let mut dpkg = vec!["dpkg", "-i"];
    dpkg.extend(names.iter().map(String::as_str));
    chroot(&root, &dpkg, log)?;
    fs::remove_dir_all(&inside).map_err(|e| format!("{}: {e}", inside.display()))?;
    configure(&root, repo, rules, log)?;

    let boot = root.join("boot");
    let kernel = one_named(&boot, "vmlinuz-")?;
    let initrd = one_named(&boot, "initrd.img-")?;
    let release = kernel
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .trim_start_matches("vmlinuz-")
        .to_string();
    let (k, i) = (work.join("vmlinuz"), work.join("initrd.img"));
    fs::copy(&kernel, &k).map_err(|e| format!("{}: {e}", kernel.display()))?;
    fs::copy(&initrd, &i).map_err(|e| format!("{}: {e}", initrd.display()))?;

    // Room for Prometheus' data and the journal beside the root.
    let image = work.join("disk.img");
    let mut mkfs = Command::new("mkfs.ext4");
    mkfs.args(["-q", "-F", "-L", "fleet", "-d"])
        .arg(&root)
        .arg(&image)
        .arg("3G");
    apt::logged(mkfs, log, "mkfs.ext4 -d")?;
    fs::remove_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    Ok(Disk {
        image,
        kernel: k,
        initrd: i,
        release,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timer_dropin_resets_the_lists_it_shortens() {
        let d = timer_dropin();
        assert!(d.contains(&format!(
            "OnBootSec=\nOnBootSec=5s\nOnUnitActiveSec={INTERVAL}s\n"
        )));
        assert_eq!(d.matches("Sec=\n").count(), 1, "one reset: {d}");
        assert!(prometheus_yml().contains("job_name: node"));
    }
}
