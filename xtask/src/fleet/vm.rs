//! One boot of the fleet machine under qemu-system-x86_64: Debian's kernel and initrd, the
//! disk as root (`snapshot=on`: the boot's writes are thrown away), the shared directory
//! the guest script writes its observations into (virtio-9p, tag `fleet`), the console
//! into a log. The guest powers itself off when its script ends; past the limit it is
//! stopped.
//!
//! Always TCG, as `cargo xtask kernels` boots: under KVM the guest's clocksource would be
//! kvm-clock, and the clocksources the test switches between (tsc, hpet) are those of the
//! emulated PC.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::image::Disk;
use crate::kernels::boot;

/// Guest memory: systemd, Prometheus and node_exporter.
const MEMORY_MB: u32 = 2048;
const CPUS: u32 = 2;

/// Boots `disk` with `vdsotime.fleet=<boot>` and `append` on the kernel's command line,
/// the shared directory `share`, the console in `log`; returns how long it ran.
pub fn boot(
    disk: &Disk,
    boot: &str,
    append: &str,
    share: &Path,
    log: &Path,
    limit: Duration,
) -> Result<Duration, String> {
    fs::create_dir_all(share).map_err(|e| format!("{}: {e}", share.display()))?;
    let mut cmd = Command::new("qemu-system-x86_64");
    cmd.args(["-M", "pc", "-accel", "tcg", "-cpu", "max"])
        .args(["-m", &MEMORY_MB.to_string(), "-smp", &CPUS.to_string()])
        .args(["-display", "none", "-serial", "stdio", "-monitor", "none"])
        .args(["-nodefaults", "-no-reboot"])
        .arg("-drive")
        .arg(format!(
            "file={},format=raw,if=virtio,snapshot=on",
            disk.image.display()
        ))
        .arg("-virtfs")
        .arg(format!(
            "local,path={},mount_tag=fleet,security_model=none,id=fleet",
            share.display()
        ))
        .arg("-kernel")
        .arg(&disk.kernel)
        .arg("-initrd")
        .arg(&disk.initrd)
        .arg("-append")
        .arg(
            format!("root=/dev/vda rw console=ttyS0 quiet panic=-1 vdsotime.fleet={boot} {append}")
                .trim_end(),
        );
    boot::run(cmd, log, limit)
}
