//! What the kernel harness knows of one machine's kernel once it has it, or why it has
//! none: shared by the fetch of Debian's images ([`super::fetch`]) and the build from
//! Debian's source ([`super::source`]), which import this module and not each other.

use std::path::PathBuf;

/// A kernel ready to boot.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub image: PathBuf,
    /// `uname -r` of the kernel, from its file name (`vmlinuz-<release>`).
    pub release: String,
    /// The Debian packages (file names, so with their versions) it came from.
    pub package: String,
    /// Its configuration builds the vDSO's getrandom.
    pub getrandom: bool,
    /// The suite it came from, and why each suite preferred to it was not used.
    pub suite: String,
    pub passed_over: Vec<String>,
    /// A kernel built from source, downloaded and not built yet (see [`super::source`]).
    pub unbuilt: Option<Unbuilt>,
}

impl Kernel {
    /// Where the kernel came from, for the report: `sid (trixie-backports: ...)`.
    pub fn origin(&self) -> String {
        if self.passed_over.is_empty() {
            self.suite.clone()
        } else {
            format!("{} ({})", self.suite, self.passed_over.join("; "))
        }
    }
}

/// Why a machine has nothing to boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unbootable {
    /// What it needs cannot be had here (no suite serves its kernel, a tool is missing):
    /// the machine is UNAVAILABLE.
    Unavailable(String),
    /// What it needs came and is wrong (a package without a kernel, a build that fails):
    /// the machine FAILs.
    Failed(String),
}

/// A kernel whose source is downloaded and not built yet.
#[derive(Debug, Clone)]
pub struct Unbuilt {
    /// The source package.
    pub deb: PathBuf,
    /// The configuration fragment.
    pub config: &'static str,
}

/// Whether the kernel's configuration builds the vDSO's getrandom
/// (`CONFIG_VDSO_GETRANDOM=y`, lib/vdso/Kconfig): its tests must then run there.
pub fn exports_getrandom(config: &str) -> bool {
    config
        .lines()
        .any(|l| l.trim() == "CONFIG_VDSO_GETRANDOM=y")
}
