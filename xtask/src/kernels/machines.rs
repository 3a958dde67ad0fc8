//! The virtual machines `cargo xtask kernels` boots: a Debian kernel package of each
//! architecture and the qemu-system machine that runs it under TCG.
//!
//! The machine types and console names are the ones each kernel finds a console on with no
//! firmware of its own: arm64/armhf `virt` (PL011 `ttyAMA0`), ppc64el `pseries` with QEMU's
//! minimal Open Firmware (`x-vof`, seconds instead of SLOF's tens), s390x's SCLP console,
//! riscv64 `virt` with OpenSBI, i386 and x86_64 `pc` (`ttyS0`; its HPET and the PIIX4's
//! ACPI PM timer are the clocksources the x86_64 scenarios switch to).
//!
//! Each architecture boots the kernel of the machine's own release (bookworm) and the
//! newest one Debian builds for it: trixie-backports', or unstable's for riscv64 (not a
//! release architecture before trixie). A machine names its suites in order of preference
//! (`-newest`: trixie-backports, else unstable): a mirror may list a kernel in a suite's
//! index and not serve its files, and the next suite is then used, the report line saying
//! which. The version is resolved from the suite's index at run time, so an upload that
//! replaces it changes nothing here.
//!
//! `x86_64-aux` boots a kernel built from Debian's newest source package (`linux-source`)
//! with the auxiliary clocks, which every Debian kernel image leaves out (see
//! [`super::source`]). It comes last: its kernel builds while the others boot.

use super::scenarios::{Scenario, DEFAULT_ONLY, X86_64};
use crate::targets::{self, Target};

/// Which Debian suite a kernel comes from, relative to the machine's own release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suite {
    /// The machine's release (bookworm).
    Release,
    /// `<release>-backports`.
    Backports,
    /// A named suite served by the same mirror (trixie, trixie-backports, sid).
    Named(&'static str),
}

impl Suite {
    /// The suite's name on a machine running the release `codename`.
    pub fn name(self, codename: &str) -> String {
        match self {
            Suite::Release => codename.to_string(),
            Suite::Backports => format!("{codename}-backports"),
            Suite::Named(name) => name.to_string(),
        }
    }
}

const RELEASE: &[Suite] = &[Suite::Release];
const BACKPORTS: &[Suite] = &[Suite::Backports];
const TRIXIE: &[Suite] = &[Suite::Named("trixie")];
const TRIXIE_BACKPORTS: &[Suite] = &[Suite::Named("trixie-backports")];
const SID: &[Suite] = &[Suite::Named("sid")];
/// The newest Debian kernel: trixie-backports', else unstable's (the `-newest` machines).
const NEWEST: &[Suite] = &[Suite::Named("trixie-backports"), Suite::Named("sid")];

/// One virtual machine to boot.
#[derive(Debug, Clone, Copy)]
pub struct Machine {
    /// Name for `--target` and the logs: `<arch>-<suite>`.
    pub name: &'static str,
    /// Architecture, as the fixture files name it (`<arch>-linux-<release>.so`).
    pub arch: &'static str,
    /// The Rust target whose static binaries run inside.
    pub triple: &'static str,
    /// Debian architecture.
    pub deb_arch: &'static str,
    /// Where the kernel comes from, in order of preference: the first suite whose index
    /// names a kernel that downloads (a package that is not in a suite, or whose download
    /// fails, passes to the next; one that downloads but holds no kernel fails the machine).
    pub suites: &'static [Suite],
    /// Debian's metapackage that depends on the current kernel image package (for a
    /// machine whose kernel is built here: on the current kernel source package).
    pub kernel_package: &'static str,
    /// The kernel is built from Debian's source package, from `make tinyconfig` and these
    /// options, instead of being Debian's own image (see [`super::source`]).
    pub source_config: Option<&'static str>,
    /// The emulator and the Debian package that ships it.
    pub qemu: &'static str,
    pub qemu_package: &'static str,
    /// Machine, CPU and device options.
    pub qemu_args: &'static [&'static str],
    /// Kernel console device.
    pub console: &'static str,
    /// The boots of this kernel: the first is the default one, which runs the test suite.
    pub scenarios: &'static [Scenario],
}

impl Machine {
    /// The cross target that builds this machine's binaries.
    pub fn target(&self) -> Option<Target> {
        targets::find(self.triple)
    }

    /// The suites, as `--list` shows them: `trixie-backports, else sid`.
    pub fn suites_text(&self, codename: &str) -> String {
        let names: Vec<String> = self.suites.iter().map(|s| s.name(codename)).collect();
        names.join(", else ")
    }
}

/// Every machine, in the order they boot: the longest boots first (under TCG: the
/// vDSO's getrandom tests on s390x, x86_64's suite and doctor, riscv64), the short ones
/// last, so that `--jobs` machines end close together (x86_64's scenario boots, a few
/// seconds each, come after every default boot).
pub const ALL: &[Machine] = &[
    Machine {
        name: "s390x-newest",
        arch: "s390x",
        triple: "s390x-unknown-linux-gnu",
        deb_arch: "s390x",
        suites: NEWEST,
        kernel_package: "linux-image-s390x",
        source_config: None,
        qemu: "qemu-system-s390x",
        qemu_package: "qemu-system-s390x",
        qemu_args: &["-M", "s390-ccw-virtio"],
        console: "ttysclp0",
        scenarios: DEFAULT_ONLY,
    },
    Machine {
        name: "x86_64-trixie-backports",
        arch: "x86_64",
        triple: "x86_64-unknown-linux-musl",
        deb_arch: "amd64",
        suites: TRIXIE_BACKPORTS,
        kernel_package: "linux-image-amd64",
        source_config: None,
        qemu: "qemu-system-x86_64",
        qemu_package: "qemu-system-x86",
        qemu_args: X86_64_ARGS,
        console: "ttyS0",
        scenarios: X86_64,
    },
    Machine {
        name: "x86_64-trixie",
        arch: "x86_64",
        triple: "x86_64-unknown-linux-musl",
        deb_arch: "amd64",
        suites: TRIXIE,
        kernel_package: "linux-image-amd64",
        source_config: None,
        qemu: "qemu-system-x86_64",
        qemu_package: "qemu-system-x86",
        qemu_args: X86_64_ARGS,
        console: "ttyS0",
        scenarios: X86_64,
    },
    Machine {
        name: "riscv64-sid",
        arch: "riscv64",
        triple: "riscv64gc-unknown-linux-gnu",
        deb_arch: "riscv64",
        suites: SID,
        kernel_package: "linux-image-riscv64",
        source_config: None,
        qemu: "qemu-system-riscv64",
        qemu_package: "qemu-system-riscv",
        qemu_args: &["-M", "virt"],
        console: "ttyS0",
        scenarios: DEFAULT_ONLY,
    },
    Machine {
        name: "ppc64le-newest",
        arch: "powerpc64le",
        triple: "powerpc64le-unknown-linux-gnu",
        deb_arch: "ppc64el",
        suites: NEWEST,
        kernel_package: "linux-image-powerpc64le",
        source_config: None,
        qemu: "qemu-system-ppc64",
        qemu_package: "qemu-system-ppc",
        qemu_args: &["-M", "pseries,x-vof=on", "-nodefaults"],
        console: "hvc0",
        scenarios: DEFAULT_ONLY,
    },
    Machine {
        name: "aarch64-trixie-backports",
        arch: "aarch64",
        triple: "aarch64-unknown-linux-musl",
        deb_arch: "arm64",
        suites: TRIXIE_BACKPORTS,
        kernel_package: "linux-image-arm64",
        source_config: None,
        qemu: "qemu-system-aarch64",
        qemu_package: "qemu-system-arm",
        qemu_args: &["-M", "virt", "-cpu", "max,pauth-impdef=on"],
        console: "ttyAMA0",
        scenarios: DEFAULT_ONLY,
    },
    Machine {
        name: "aarch64-backports",
        arch: "aarch64",
        triple: "aarch64-unknown-linux-musl",
        deb_arch: "arm64",
        suites: BACKPORTS,
        kernel_package: "linux-image-arm64",
        source_config: None,
        qemu: "qemu-system-aarch64",
        qemu_package: "qemu-system-arm",
        qemu_args: &["-M", "virt", "-cpu", "max,pauth-impdef=on"],
        console: "ttyAMA0",
        scenarios: DEFAULT_ONLY,
    },
    Machine {
        name: "riscv64-trixie",
        arch: "riscv64",
        triple: "riscv64gc-unknown-linux-gnu",
        deb_arch: "riscv64",
        suites: TRIXIE,
        kernel_package: "linux-image-riscv64",
        source_config: None,
        qemu: "qemu-system-riscv64",
        qemu_package: "qemu-system-riscv",
        qemu_args: &["-M", "virt"],
        console: "ttyS0",
        scenarios: DEFAULT_ONLY,
    },
    Machine {
        name: "i686-release",
        arch: "i686",
        triple: "i686-unknown-linux-musl",
        deb_arch: "i386",
        suites: RELEASE,
        kernel_package: "linux-image-686",
        source_config: None,
        qemu: "qemu-system-i386",
        qemu_package: "qemu-system-x86",
        qemu_args: &["-cpu", "max"],
        console: "ttyS0",
        scenarios: DEFAULT_ONLY,
    },
    Machine {
        name: "s390x-release",
        arch: "s390x",
        triple: "s390x-unknown-linux-gnu",
        deb_arch: "s390x",
        suites: RELEASE,
        kernel_package: "linux-image-s390x",
        source_config: None,
        qemu: "qemu-system-s390x",
        qemu_package: "qemu-system-s390x",
        qemu_args: &["-M", "s390-ccw-virtio"],
        console: "ttysclp0",
        scenarios: DEFAULT_ONLY,
    },
    Machine {
        name: "ppc64le-release",
        arch: "powerpc64le",
        triple: "powerpc64le-unknown-linux-gnu",
        deb_arch: "ppc64el",
        suites: RELEASE,
        kernel_package: "linux-image-powerpc64le",
        source_config: None,
        qemu: "qemu-system-ppc64",
        qemu_package: "qemu-system-ppc",
        qemu_args: &["-M", "pseries,x-vof=on", "-nodefaults"],
        console: "hvc0",
        scenarios: DEFAULT_ONLY,
    },
    Machine {
        name: "aarch64-release",
        arch: "aarch64",
        triple: "aarch64-unknown-linux-musl",
        deb_arch: "arm64",
        suites: RELEASE,
        kernel_package: "linux-image-arm64",
        source_config: None,
        qemu: "qemu-system-aarch64",
        qemu_package: "qemu-system-arm",
        // Pointer authentication with QEMU's cheap hash instead of QARMA: the same
        // instructions, several times faster under TCG.
        qemu_args: &["-M", "virt", "-cpu", "max,pauth-impdef=on"],
        console: "ttyAMA0",
        scenarios: DEFAULT_ONLY,
    },
    Machine {
        name: "armv7-newest",
        arch: "arm",
        triple: "armv7-unknown-linux-gnueabihf",
        deb_arch: "armhf",
        suites: NEWEST,
        kernel_package: "linux-image-armmp-lpae",
        source_config: None,
        qemu: "qemu-system-arm",
        qemu_package: "qemu-system-arm",
        qemu_args: &["-M", "virt,highmem=off", "-cpu", "cortex-a15"],
        console: "ttyAMA0",
        scenarios: DEFAULT_ONLY,
    },
    Machine {
        name: "armv7-release",
        arch: "arm",
        triple: "armv7-unknown-linux-gnueabihf",
        deb_arch: "armhf",
        suites: RELEASE,
        kernel_package: "linux-image-armmp-lpae",
        source_config: None,
        qemu: "qemu-system-arm",
        qemu_package: "qemu-system-arm",
        qemu_args: &["-M", "virt,highmem=off", "-cpu", "cortex-a15"],
        console: "ttyAMA0",
        scenarios: DEFAULT_ONLY,
    },
    Machine {
        name: "x86_64-aux",
        arch: "x86_64",
        triple: "x86_64-unknown-linux-musl",
        deb_arch: "amd64",
        suites: NEWEST,
        kernel_package: "linux-source",
        source_config: Some(include_str!("../../kernel-config/x86_64-aux.config")),
        qemu: "qemu-system-x86_64",
        qemu_package: "qemu-system-x86",
        qemu_args: X86_64_ARGS,
        console: "ttyS0",
        scenarios: DEFAULT_ONLY,
    },
];

/// x86_64: i440FX `pc` (HPET and the PIIX4 ACPI PM timer both present), every CPU feature
/// TCG emulates.
const X86_64_ARGS: &[&str] = &["-M", "pc", "-cpu", "max"];

/// The machines `--target` names: a machine name or a Rust target triple (all its machines).
pub fn select(name: &str) -> Vec<Machine> {
    ALL.iter()
        .copied()
        .filter(|m| m.name == name || m.triple == name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_machine_has_a_cross_target_and_a_unique_name() {
        for (i, m) in ALL.iter().enumerate() {
            assert!(m.target().is_some(), "{} has no cross target", m.name);
            assert!(ALL[..i].iter().all(|o| o.name != m.name), "{}", m.name);
        }
        assert_eq!(select("aarch64-unknown-linux-musl").len(), 3);
        assert_eq!(select("x86_64-unknown-linux-musl").len(), 3);
        assert_eq!(select("s390x-release").len(), 1);
        assert!(select("mips").is_empty());
    }

    #[test]
    fn suites_are_relative_to_the_release_and_listed_in_order() {
        assert_eq!(Suite::Release.name("bookworm"), "bookworm");
        assert_eq!(Suite::Backports.name("bookworm"), "bookworm-backports");
        assert_eq!(Suite::Named("trixie").name("bookworm"), "trixie");
        for m in ALL {
            assert!(!m.suites.is_empty(), "{}", m.name);
            // A `-newest` machine says so by its name; the others name their one suite.
            if m.name.ends_with("-newest") || m.source_config.is_some() {
                assert_eq!(m.suites, NEWEST, "{}", m.name);
            } else {
                assert_eq!(m.suites.len(), 1, "{}", m.name);
            }
        }
        let s390x = select("s390x-newest")[0];
        assert_eq!(s390x.suites_text("bookworm"), "trixie-backports, else sid");
    }
}
