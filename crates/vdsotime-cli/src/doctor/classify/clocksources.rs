//! What the kernel's clocksources mean for the vDSO, by name: which it can read, which
//! to switch to, and how. A name is a hint (kvm-clock, for one, is readable only when
//! the host marks it stable); the seccomp probe is the proof.

use crate::doctor::findings::Fix;

/// The sysfs file that selects the clocksource.
pub const SYSFS: &str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";

/// Whether the vDSO can read a clocksource, as far as its name tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Readable {
    /// The kernel gives it a vDSO clock mode.
    Yes,
    /// Only under conditions the name does not show (kvm-clock, xen).
    Conditional,
    /// Never: every counter-clock read enters the kernel.
    No,
    /// A name this table does not know.
    Unknown,
}

/// Clocksources with a vDSO clock mode, best first: the order to suggest them in.
const READABLE: [&str; 8] = [
    "tsc",
    "hyperv_clocksource_tsc_page",
    "arch_sys_counter",
    "riscv_clocksource",
    "timebase",
    "tod",
    "Constant",
    "tsc-early",
];
/// x86 clocksources readable only when the hypervisor marks them stable.
const CONDITIONAL: [&str; 2] = ["kvm-clock", "xen"];
/// Clocksources no vDSO reads.
const UNREADABLE: [&str; 5] = ["hpet", "acpi_pm", "pit", "jiffies", "refined-jiffies"];

/// What the name `cs` says.
pub fn readable(cs: &str) -> Readable {
    if READABLE.contains(&cs) {
        Readable::Yes
    } else if CONDITIONAL.contains(&cs) {
        Readable::Conditional
    } else if UNREADABLE.contains(&cs) {
        Readable::No
    } else {
        Readable::Unknown
    }
}

/// Whether `available` lists the TSC only as `tsc-early`: the kernel registers the TSC
/// under that name at boot and replaces it by `tsc` once it has refined the calibration
/// (seconds later), or drops it if the TSC proves unstable meanwhile.
pub fn tsc_still_early(available: &[String]) -> bool {
    let listed = |n: &str| available.iter().any(|a| a == n);
    listed("tsc-early") && !listed("tsc")
}

/// The clocksource to switch to: the best one in `available` that the vDSO reads, else a
/// conditional one, never `current`. `tsc-early` is offered as `tsc`, the name that
/// outlives it (see [`switch_sentence`]).
pub fn better(available: &[String], current: &str) -> Option<String> {
    // tsc-early in use is the TSC already: tsc is no switch from it.
    let current = if current == "tsc-early" {
        "tsc"
    } else {
        current
    };
    let offered = |name: &str| {
        name != current
            && (available.iter().any(|a| a == name)
                || (name == "tsc" && tsc_still_early(available)))
    };
    READABLE
        .iter()
        .chain(CONDITIONAL.iter())
        .find(|n| **n != "tsc-early" && offered(n))
        .map(|s| s.to_string())
}

/// The switch to `cs`: the sysfs write now and the boot parameter for later.
pub fn switch_to(cs: &str) -> Fix {
    Fix {
        clocksource: Some(cs.to_string()),
        sysfs: Some(format!("echo {cs} > {SYSFS}")),
        boot: Some(format!("clocksource={cs}")),
        kernel: None,
    }
}

/// The switch to `cs` (from [`better`] on `available`) as a sentence.
pub fn switch_sentence(cs: &str, available: &[String]) -> String {
    let caveat = if readable(cs) == Readable::Conditional {
        format!(" The vDSO reads {cs} only when the host marks it stable: run the doctor again after switching.")
    } else {
        String::new()
    };
    let listed = if cs == "tsc" && tsc_still_early(available) {
        // The kernel keeps the name written to current_clocksource and selects it when
        // a clocksource of that name registers.
        "which available_clocksource still lists as tsc-early (the kernel renames it tsc once it has refined the TSC's calibration, seconds after boot, and the write below takes effect then)"
    } else {
        "which is listed in available_clocksource"
    };
    format!(
        "Switch to {cs}, {listed}: now with `echo {cs} > {SYSFS}` (as root), and across reboots with the kernel parameter `clocksource={cs}`.{caveat}"
    )
}

/// `(major, minor)` of a kernel release such as `6.12.38+deb13-amd64`.
pub fn kernel_version(release: &str) -> Option<(u32, u32)> {
    let mut it = release.split(|c: char| !c.is_ascii_digit());
    let major = it.next()?.parse().ok()?;
    let minor = it.next()?.parse().ok()?;
    Some((major, minor))
}

/// The first kernel whose vDSO serves BOOTTIME, TAI and MONOTONIC_RAW (the generic vDSO)
/// on this machine, where known.
pub fn generic_vdso_since(machine: &str) -> Option<(u32, u32)> {
    match machine {
        "x86_64" | "i386" | "i486" | "i586" | "i686" | "aarch64" => Some((5, 3)),
        _ => None,
    }
}

/// Whether `machine` is an x86 (where the TSC and its flags mean something).
pub fn is_x86(machine: &str) -> bool {
    matches!(machine, "x86_64" | "i386" | "i486" | "i586" | "i686")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn names_and_suggestions() {
        assert_eq!(readable("hpet"), Readable::No);
        assert_eq!(readable("kvm-clock"), Readable::Conditional);
        assert_eq!(readable("tsc"), Readable::Yes);
        assert_eq!(readable("mystery"), Readable::Unknown);
        assert_eq!(
            better(&list("tsc hpet acpi_pm"), "hpet").as_deref(),
            Some("tsc")
        );
        assert_eq!(
            better(&list("kvm-clock tsc hpet"), "hpet").as_deref(),
            Some("tsc")
        );
        assert_eq!(
            better(&list("kvm-clock hpet acpi_pm"), "hpet").as_deref(),
            Some("kvm-clock")
        );
        assert_eq!(better(&list("hpet acpi_pm"), "hpet"), None);
        assert_eq!(better(&list("tsc"), "tsc"), None);
    }

    /// Seconds after boot the TSC is listed as tsc-early: the doctor names tsc, the name
    /// the kernel will select it by, and says why it is not listed yet.
    #[test]
    fn tsc_early_is_offered_as_tsc() {
        let early = list("tsc-early hpet acpi_pm");
        assert_eq!(readable("tsc-early"), Readable::Yes);
        assert!(tsc_still_early(&early));
        assert!(!tsc_still_early(&list("tsc hpet acpi_pm")));
        assert_eq!(better(&early, "hpet").as_deref(), Some("tsc"));
        assert_eq!(better(&early, "tsc-early"), None);
        let s = switch_sentence("tsc", &early);
        assert!(s.contains("still lists as tsc-early"), "{s}");
        assert!(s.contains("clocksource=tsc`"), "{s}");
        let s = switch_sentence("tsc", &list("tsc hpet"));
        assert!(
            s.contains("which is listed in available_clocksource"),
            "{s}"
        );
    }

    #[test]
    fn the_fix_is_the_sysfs_write_and_the_boot_parameter() {
        let f = switch_to("tsc");
        assert_eq!(
            f.sysfs.as_deref(),
            Some("echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource")
        );
        assert_eq!(f.boot.as_deref(), Some("clocksource=tsc"));
        assert!(switch_sentence("kvm-clock", &list("kvm-clock hpet"))
            .contains("only when the host marks it stable"));
    }

    #[test]
    fn kernel_versions() {
        assert_eq!(kernel_version("6.12.38+deb13-amd64"), Some((6, 12)));
        assert_eq!(kernel_version("4.19.0-27-amd64"), Some((4, 19)));
        assert_eq!(kernel_version("7.3"), Some((7, 3)));
        assert_eq!(kernel_version("garbage"), None);
    }
}
