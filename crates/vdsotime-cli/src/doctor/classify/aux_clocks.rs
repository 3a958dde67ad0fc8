//! The auxiliary clocks (Linux 6.17+, `CLOCK_AUX0`...): an enabled one is there because
//! something reads it, and the kernel's generic vDSO serves it from the same clocksource as
//! MONOTONIC. Said here: an enabled one that enters the kernel while MONOTONIC does not (a
//! clocksource the vDSO cannot read is the clocksource's finding, which explains both),
//! the enabled ones served, or a kernel that has them with none enabled.

use crate::doctor::call_paths::{PathEntry, PathKind};
use crate::doctor::classify::clocksources;
use crate::doctor::classify::scene::Scene;
use crate::doctor::findings::{Code, Finding, Fix, Role, Severity, Subject};
use crate::doctor::seccomp::Method;

/// The first release whose vDSO serves the auxiliary clocks (the one that added them).
const SINCE: (u32, u32) = (6, 17);

/// Machines (`uname -m`) whose kernels use the generic vDSO, which has the auxiliary
/// clocks' path: the architectures that select GENERIC_GETTIMEOFDAY.
fn generic_vdso(machine: &str) -> bool {
    matches!(
        machine,
        "x86_64"
            | "i386"
            | "i486"
            | "i586"
            | "i686"
            | "aarch64"
            | "loongarch64"
            | "riscv64"
            | "s390x"
            | "sparc64"
    ) || ["arm", "mips", "ppc"]
        .iter()
        .any(|p| machine.starts_with(p))
}

/// The rows of the enabled auxiliary clocks.
fn rows<'s>(s: &'s Scene) -> impl Iterator<Item = &'s PathEntry> + Clone {
    s.paths.iter().filter(|e| e.is_aux())
}

/// The enabled auxiliary clocks that enter the kernel because of the vDSO itself: none
/// without a vDSO, under a clocksource the vDSO cannot read, or while MONOTONIC is not
/// served either (each of those has its own finding).
fn lacking<'s>(s: &'s Scene) -> Vec<&'s PathEntry> {
    let monotonic_served = s.reference().is_some_and(|r| r.path == PathKind::Vdso);
    if !s.p.has_vdso || s.slow_clocksource.is_some() || !monotonic_served {
        return Vec::new();
    }
    rows(s)
        .filter(|e| e.path == PathKind::VdsoFallback)
        .collect()
}

/// Whether `e` enters the kernel because this vDSO does not serve the auxiliary clocks
/// (told once, as a cause, by [`cause`]).
pub fn vdso_lacks(s: &Scene, e: &PathEntry) -> bool {
    lacking(s).iter().any(|l| l.clock == e.clock)
}

fn names(rows: &[&PathEntry]) -> String {
    let names: Vec<&str> = rows.iter().filter_map(|e| e.clock.as_deref()).collect();
    names.join(", ")
}

/// Why this vDSO lacks them, as far as the profile tells.
fn why(s: &Scene) -> String {
    let f = &s.p.facts;
    match clocksources::kernel_version(&f.kernel_release) {
        Some(v) if v < SINCE => {
            return format!(
                "Linux {} is older than {}.{}, whose vDSO serves them: this kernel has the auxiliary clocks without the vDSO's part of them.",
                f.kernel_release, SINCE.0, SINCE.1
            )
        }
        _ => {}
    }
    if !generic_vdso(&f.machine) {
        return format!(
            "The {} kernel's vDSO is not the generic one, which alone has their code (x86, arm64, arm, loongarch64, mips, powerpc, riscv64, s390x, sparc64).",
            f.machine
        );
    }
    "The kernel's generic vDSO serves them since 6.17, so this vDSO is not the kernel's own: a sandbox or emulator that provides its own vDSO (gVisor, for one) may lack them.".into()
}

/// An enabled auxiliary clock that enters the kernel while the vDSO serves MONOTONIC.
pub fn cause(s: &Scene, out: &mut Vec<Finding>) {
    let lacking = lacking(s);
    let Some(first) = lacking.first() else {
        return;
    };
    let list = names(&lacking);
    let (them, is) = if lacking.len() == 1 {
        ("it", "is")
    } else {
        ("them", "are")
    };
    let proof = match first.method {
        Method::Seccomp => format!(
            "proved: under a seccomp filter, the vDSO's {} made the system call",
            first.label()
        ),
        _ => "judged by timing".into(),
    };
    let cost = match (first.vdso_ns, first.syscall_ns) {
        (Some(v), Some(sys)) => format!(
            " ({} costs {} ns against {} ns for the system call)",
            first.label(),
            s.ns(Some(v)),
            s.ns(Some(sys))
        ),
        _ => String::new(),
    };
    let msg = format!(
        "The auxiliary clock {list} {is} enabled, but this process's vDSO does not serve {them} ({proof}), while it serves clock_gettime(MONOTONIC) from the same clocksource: every read of {list} is a system call{cost}. {} The readings are right (vdsotime falls back to the system call, as the vDSO would); to read {them} in user space, run Linux {}.{} or later on an architecture whose vDSO is the kernel's generic one.",
        why(s),
        SINCE.0,
        SINCE.1
    );
    out.push(
        Finding::new(
            Code::VdsoLacksAuxClocks,
            Severity::Warning,
            Role::Cause,
            msg,
        )
        .about(Subject {
            function: Some("clock_gettime".into()),
            clock: first.clock.clone(),
            ..Subject::default()
        })
        .costs(first.vdso_ns, first.syscall_ns)
        .fix(Fix {
            kernel: Some(format!(
                "Linux {}.{} or later with the generic vDSO",
                SINCE.0, SINCE.1
            )),
            ..Fix::default()
        }),
    );
}

/// A kernel with auxiliary clocks, none enabled: said once, calmly.
pub fn context(s: &Scene, out: &mut Vec<Finding>) {
    if s.p
        .facts
        .aux_clocks_enabled
        .as_ref()
        .is_some_and(Vec::is_empty)
    {
        out.push(Finding::new(
            Code::AuxClocksNoneEnabled,
            Severity::Note,
            Role::Context,
            "This kernel has auxiliary clocks (/sys/kernel/time/aux_clocks), none of them enabled: there is no auxiliary clock to prove. One enabled (its aux_clock_enable reads 1) is proved like the other clocks.",
        ));
    }
}

/// Every enabled auxiliary clock answered in user space (said only when healthy).
pub fn healthy(s: &Scene, out: &mut Vec<Finding>) {
    let all: Vec<&PathEntry> = rows(s).collect();
    let Some(first) = all.first() else {
        return;
    };
    if !s.p.has_vdso || all.iter().any(|e| e.path != PathKind::Vdso) {
        return;
    }
    let proof = if all.iter().all(|e| e.method == Method::Seccomp) {
        "proved under a seccomp filter that catches the system calls"
    } else {
        "judged by timing"
    };
    let (clocks, are) = if all.len() == 1 {
        ("clock", "is")
    } else {
        ("clocks", "are")
    };
    out.push(
        Finding::new(
            Code::AuxClocksServed,
            Severity::Ok,
            Role::Context,
            format!(
                "The enabled auxiliary {clocks} {} {are} answered in user space by the vDSO ({proof}): {} costs {} ns against {} ns for the system call.",
                names(&all),
                first.label(),
                s.ns(first.vdso_ns),
                s.ns(first.syscall_ns)
            ),
        )
        .about(Subject {
            function: Some("clock_gettime".into()),
            clock: first.clock.clone(),
            ..Subject::default()
        })
        .costs(first.vdso_ns, first.syscall_ns),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generic_vdso_machines() {
        for m in [
            "x86_64", "i686", "aarch64", "armv7l", "ppc64le", "riscv64", "s390x",
        ] {
            assert!(generic_vdso(m), "{m}");
        }
        for m in ["riscv32", "m68k", "alpha", "parisc64"] {
            assert!(!generic_vdso(m), "{m}");
        }
    }
}
