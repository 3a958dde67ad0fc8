//! Booting one machine under TCG: the kernel with the initramfs, its console on stdout into
//! a log file, ended by the init's power-off or, past the limit, by us.

use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use super::machines::Machine;

/// Guest memory of a boot that runs the test suite: the initramfs (about 60 MB of test
/// binaries) is unpacked into it next to its own copy.
pub const SUITE_MEMORY_MB: u32 = 512;
/// Guest memory of the other boots: the init and the tool only.
pub const LIGHT_MEMORY_MB: u32 = 256;
/// Two CPUs, so per-CPU code (getcpu, readings passed between CPUs) has two to differ on.
const CPUS: u32 = 2;

/// The qemu-system command line for `m`, with `append` added to the kernel's.
pub fn command(m: &Machine, kernel: &Path, initrd: &Path, append: &str, memory_mb: u32) -> Command {
    // A kernel built from tinyconfig has no power-off driver: the init ends it by a reboot,
    // which `-no-reboot` turns into QEMU's exit (the init reads this word).
    let end = if m.source_config.is_some() {
        "vdsotime.end=reboot "
    } else {
        ""
    };
    // At boot an x86 kernel checks that the timer interrupt arrives through the IO-APIC
    // within a few emulated ticks; under TCG on a loaded host it may not, and the kernel
    // panics ("IO-APIC + timer doesn't work!"). The check proves nothing about QEMU's
    // emulated timer, which works: skip it.
    let timer = if matches!(m.arch, "x86_64" | "i686") {
        "no_timer_check "
    } else {
        ""
    };
    let mut cmd = Command::new(m.qemu);
    cmd.args(m.qemu_args)
        .args(["-m", &memory_mb.to_string(), "-smp", &CPUS.to_string()])
        .args(["-display", "none", "-serial", "stdio", "-monitor", "none"])
        .args(["-nic", "none", "-no-reboot"])
        .arg("-kernel")
        .arg(kernel)
        .arg("-initrd")
        .arg(initrd)
        .arg("-append")
        // panic=-1 with -no-reboot: a kernel panic ends QEMU at once instead of hanging.
        .arg(
            format!(
                "console={} panic=-1 quiet rdinit=/init {timer}{end}{append}",
                m.console
            )
            .trim_end(),
        );
    cmd
}

/// Runs the machine to its end, the console in `log`; the error says why it did not stop
/// by itself in time.
pub fn run(mut cmd: Command, log: &Path, limit: Duration) -> Result<Duration, String> {
    let out = File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("{:?}: {e}", cmd.get_program()))?;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(start.elapsed()),
            Ok(Some(status)) => return Err(format!("qemu exited with {status}")),
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "still running after {} s, stopped",
                    limit.as_secs()
                ));
            }
            Ok(None) => sleep(Duration::from_millis(200)),
            Err(e) => return Err(format!("waiting for qemu: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::machines;

    /// x86 kernels skip the IO-APIC timer check that panics a loaded TCG machine; the
    /// scenario's words come last.
    #[test]
    fn x86_boots_skip_the_timer_check() {
        for m in machines::ALL {
            let cmd = command(m, Path::new("k"), Path::new("i"), "clocksource=hpet", 256);
            let args: Vec<String> = cmd
                .get_args()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            let line = &args[args.iter().position(|a| a == "-append").unwrap() + 1];
            let x86 = matches!(m.arch, "x86_64" | "i686");
            assert_eq!(line.contains(" no_timer_check "), x86, "{}: {line}", m.name);
            assert!(line.ends_with("clocksource=hpet"), "{line}");
        }
    }
}
