//! PID 1 of the virtual machines `cargo xtask kernels` boots: a static program that mounts
//! what the tests need, runs the programs its plan (`/plan`) names, each with a timeout, reports
//! on the console in lines the host reads (module [`report`]), and powers the machine off.
//!
//! The initramfs holds no other userland, so this program also answers to the commands the
//! core's tests start: `true` (exit 0), `sleep N`, and `unshare --time` (module [`unshare`]),
//! to `env NAME=VALUE... PROGRAM` (module [`env`](mod@env): a variable for one program of
//! the plan), to `vm-truth`, the reading of the kernel's clock state the host judges
//! `vdsotime doctor` against (module [`truth`]), and to `vm-write PATH VALUE`, which
//! writes a sysfs switch (exit 1, saying why, if the kernel refuses), to `vm-timeloop`
//! and `vm-top-watch`, the time-reading processes `vdsotime top` is judged against (module
//! [`timeloop`]), and to `vm-syscalls` (`vm-syscalls32`) and `vm-top-count`, the exact count `top` must
//! match with each of its backends (module [`count`]). The host installs
//! them in `/bin` as links to it.

mod count;
mod env;
mod plan;
mod report;
mod run;
mod timeloop;
mod truth;
mod unshare;
mod vdso;

use std::ffi::CString;
use std::path::Path;
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let name = args
        .first()
        .and_then(|a| Path::new(a).file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("");
    match name {
        "true" => std::process::exit(0),
        "sleep" => {
            let secs: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(0.0);
            std::thread::sleep(Duration::from_secs_f64(secs.max(0.0)));
        }
        "unshare" => std::process::exit(unshare::main(&args[1..])),
        "env" => std::process::exit(env::main(&args[1..])),
        "vm-truth" => std::process::exit(truth::main()),
        "vm-write" => std::process::exit(write(&args[1..])),
        "vm-timeloop" => std::process::exit(timeloop::timeloop(&args[1..])),
        "vm-top-watch" => std::process::exit(timeloop::watch(&args[1..])),
        "vm-syscalls" | "vm-syscalls32" => std::process::exit(count::syscalls(&args[1..])),
        "vm-top-count" => std::process::exit(count::top_count(&args[1..])),
        _ => init(),
    }
}

/// `vm-write PATH VALUE`: VALUE to PATH, or a message and 1.
fn write(args: &[String]) -> i32 {
    let [path, value] = args else {
        eprintln!("usage: vm-write PATH VALUE");
        return 1;
    };
    match std::fs::write(path, value) {
        Ok(()) => {
            println!("wrote {value} to {path}");
            0
        }
        Err(e) => {
            eprintln!("vm-write: {path}: {e}");
            1
        }
    }
}

/// Mounts, runs the plan, powers off (only as PID 1: run by hand, it just returns).
fn init() {
    for (fstype, target) in [
        ("proc", "/proc"),
        ("sysfs", "/sys"),
        ("devtmpfs", "/dev"),
        ("tmpfs", "/tmp"),
    ] {
        // A checkout under /tmp put its fixtures there (at the paths the tests compiled
        // in): a tmpfs would hide them. The initramfs root is writable anyway.
        if target == "/tmp" && has_entries(target) {
            report::line("note /tmp holds the payload's files: not mounted over");
            continue;
        }
        if let Err(e) = mount(fstype, target) {
            report::line(&format!("error mount {target}: {e}"));
        }
    }
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    report::line(&format!("kernel {}", release.trim()));
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    report::line(&format!("cpus {cpus}"));
    match std::fs::read_to_string("/plan") {
        Ok(text) => match plan::parse(&text) {
            Ok(steps) => run::all(&steps),
            Err(e) => report::line(&format!("error plan: {e}")),
        },
        Err(e) => report::line(&format!("error /plan: {e}")),
    }
    report::line("done");
    power_off();
}

/// `mount -t fstype fstype target`, creating `target` if needed.
fn mount(fstype: &str, target: &str) -> Result<(), String> {
    let _ = std::fs::create_dir_all(target);
    let source = CString::new(fstype).map_err(|e| e.to_string())?;
    let dir = CString::new(target).map_err(|e| e.to_string())?;
    // SAFETY: every pointer is a NUL-terminated string that outlives the call; no data.
    let rc = unsafe {
        libc::mount(
            source.as_ptr(),
            dir.as_ptr(),
            source.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error().to_string())
    }
}

/// The kernel command-line word that asks the init to end the machine by a reboot: QEMU
/// runs with `-no-reboot`, so a reboot ends it as a power-off does. A kernel without a
/// power-off driver (the tinyconfig kernel, whose ACPI tables do not load without PCI)
/// would otherwise halt, and the host would wait out the machine's whole time limit.
const END_BY_REBOOT: &str = "vdsotime.end=reboot";

/// Flushes the disks and powers the machine off (or reboots it, see [`END_BY_REBOOT`]),
/// when this process is PID 1.
fn power_off() {
    if std::process::id() != 1 {
        return;
    }
    let cmdline = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
    let how = if cmdline.split_whitespace().any(|w| w == END_BY_REBOOT) {
        libc::RB_AUTOBOOT
    } else {
        libc::RB_POWER_OFF
    };
    // SAFETY: sync and reboot take no pointers; reboot as PID 1 ends the machine (an init
    // must not exit: the kernel would panic).
    unsafe {
        libc::sync();
        libc::reboot(how);
    }
    // Not reached unless the kernel refused; wait for the host's timeout rather than panic.
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// Whether the directory `dir` exists and has anything in it.
fn has_entries(dir: &str) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some())
}
