//! The doctor's judgement: a pure function from a [`Profile`] to findings, so any
//! machine (a real one, or a saved or simulated one) can be judged in a test. Root
//! causes come first (`causes`), then the calls they slow down (`symptoms`), then what
//! works (an `ok`, said only under a healthy verdict), then the circumstances.

use serde::{Deserialize, Serialize};

use crate::doctor::call_paths::PathKind;
use crate::doctor::findings::{self, Code, Finding, Role, Severity, Subject};
use crate::doctor::seccomp::Method;
use crate::output;

pub mod aux_clocks;
pub mod causes;
pub mod clocksources;
pub mod scene;
pub mod symptoms;

use crate::doctor::profile::Profile;
use scene::Scene;

/// The doctor's verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// `healthy` or `degraded`.
    pub status: String,
    /// Causes, then symptoms, then context; worst first within each, except that the
    /// `ok` findings lead the context ([`findings::sort`]).
    pub findings: Vec<Finding>,
}

impl Verdict {
    /// Whether any finding is `degraded`.
    pub fn degraded(&self) -> bool {
        self.status == "degraded"
    }
}

/// The notes that set the scene: method, machine, namespace.
fn context(s: &Scene, out: &mut Vec<Finding>) {
    let f = &s.p.facts;
    if s.p.has_vdso {
        let why = match &s.p.probe {
            Some(r) if r.method == Method::Seccomp => None,
            Some(r) => Some(r.unavailable.clone().unwrap_or_default()),
            None => Some("this profile was saved without it".into()),
        };
        if let Some(why) = why {
            out.push(Finding::new(
                Code::SeccompUnavailable,
                Severity::Note,
                Role::Context,
                format!("The seccomp proof could not be made ({why}): each path is judged by its cost against the system call's, which a busy or virtual machine can mislead."),
            ));
        }
    }
    if f.clocksource.is_none() {
        out.push(Finding::new(
            Code::ClocksourceUnknown,
            Severity::Note,
            Role::Context,
            "The current clocksource is unreadable (no /sys): judged by the calls alone.",
        ));
    }
    if clocksources::is_x86(&f.machine) && f.tsc_marked_unstable.is_none() {
        out.push(Finding::new(
            Code::KernelLogUnreadable,
            Severity::Note,
            Role::Context,
            "The kernel log (/dev/kmsg) could not be read, so the check whether the kernel marked the TSC unstable, and why, was not made: that cause goes unseen here. Grant CAP_SYSLOG (vdsotime-doctor.service does, with AmbientCapabilities=CAP_SYSLOG), run as root, or let every user read the log with `sysctl kernel.dmesg_restrict=0`.",
        ));
    }
    if clocksources::is_x86(&f.machine)
        && f.cpu_flags.known
        && !(f.cpu_flags.constant_tsc && f.cpu_flags.nonstop_tsc)
    {
        out.push(Finding::new(
            Code::TscNotInvariant,
            Severity::Warning,
            Role::Context,
            "The CPU does not report both constant_tsc and nonstop_tsc: the kernel may declare the TSC unstable and move to a clocksource the vDSO cannot read.",
        ));
    }
    if let Some(hv) = &f.hypervisor {
        out.push(Finding::new(
            Code::VirtualMachine,
            Severity::Note,
            Role::Context,
            format!("This is a virtual machine ({hv}): the clocksource it offers decides whether the vDSO can read the clocks."),
        ));
    }
    let offsets: Vec<String> = f
        .timens_offsets
        .iter()
        .filter(|o| o.secs != 0 || o.nsecs != 0)
        .map(|o| format!("{} {}s {}ns", o.clock, o.secs, o.nsecs))
        .collect();
    if !offsets.is_empty() {
        out.push(Finding::new(
            Code::TimeNamespace,
            Severity::Note,
            Role::Context,
            format!(
                "This process runs in a time namespace ({}): MONOTONIC and BOOTTIME are shifted. The kernel's vDSO code applies the offsets, so vdsotime is correct; tools that read the vDSO data page themselves are not.",
                offsets.join(", ")
            ),
        ));
    }
}

/// What works, said only when nothing is degraded.
fn healthy(s: &Scene, out: &mut Vec<Finding>) {
    let time_rows = s
        .paths
        .iter()
        .filter(|e| e.function != "getcpu" && e.function != "getrandom");
    let all_served = s.p.has_vdso && time_rows.clone().all(|e| e.path == PathKind::Vdso);
    if let (true, Some(r)) = (all_served, s.reference()) {
        let proof = if time_rows.clone().all(|e| e.method == Method::Seccomp) {
            "proved under a seccomp filter that catches the system calls"
        } else {
            "judged by timing"
        };
        let faster = match (r.vdso_ns, r.syscall_ns) {
            (Some(v), Some(sys)) => format!(" ({} faster)", output::ratio(sys / v)),
            _ => String::new(),
        };
        out.push(
            Finding::new(
                Code::VdsoServesAll,
                Severity::Ok,
                Role::Context,
                format!(
                    "The vDSO answers every time call without entering the kernel ({proof}): {} costs {} ns against {} ns for the system call{faster}.",
                    r.label(),
                    s.ns(r.vdso_ns),
                    s.ns(r.syscall_ns)
                ),
            )
            .costs(r.vdso_ns, r.syscall_ns),
        );
    }
    let f = &s.p.facts;
    if let (true, Some(cs)) = (s.p.has_vdso, f.clocksource.as_deref()) {
        if let Some(r) = s.reference().filter(|r| r.path == PathKind::Vdso) {
            let mut msg = format!("The clocksource is {cs}, which the vDSO reads.");
            if cs == "kvm-clock" && f.clocksources_available.iter().any(|a| a == "tsc") {
                // Only this clocksource was measured: no claim about the other's speed.
                msg += &format!(
                    " tsc is also available, and the vDSO reads it too: switching is optional. {} took {} ns here on kvm-clock; tsc was not measured (to compare, switch as root with `echo tsc > {}` and run the doctor again).",
                    r.label(),
                    s.ns(r.vdso_ns),
                    clocksources::SYSFS
                );
            }
            out.push(
                Finding::new(
                    Code::ClocksourceVdsoCapable,
                    Severity::Ok,
                    Role::Context,
                    msg,
                )
                .about(Subject {
                    clocksource: Some(cs.to_string()),
                    ..Subject::default()
                }),
            );
        }
    }
    if let Some(e) = s.path("getcpu", None).filter(|e| e.path == PathKind::Rseq) {
        out.push(
            Finding::new(
                Code::GetcpuFromRseq,
                Severity::Ok,
                Role::Context,
                format!(
                    "getcpu() is answered from the rseq area glibc registered for each thread ({} ns), with no call into the vDSO or the kernel.",
                    s.ns(e.vdso_ns)
                ),
            )
            .about(Subject {
                function: Some("getcpu".into()),
                ..Subject::default()
            })
            .costs(e.vdso_ns, e.syscall_ns),
        );
    }
}

/// Judges a profile. Pure: same profile, same verdict.
pub fn classify(p: &Profile) -> Verdict {
    let s = Scene::new(p);
    let mut out = Vec::new();
    if !p.has_vdso {
        causes::no_vdso(&s, &mut out);
    }
    causes::tsc_unstable(&s, &mut out);
    causes::clocksource(&s, &mut out);
    causes::missing_symbols(&s, &mut out);
    aux_clocks::cause(&s, &mut out);
    symptoms::judge(&s, &mut out);
    context(&s, &mut out);
    aux_clocks::context(&s, &mut out);
    let degraded = out.iter().any(|f| f.severity == Severity::Degraded);
    if !degraded {
        healthy(&s, &mut out);
        aux_clocks::healthy(&s, &mut out);
    }
    findings::sort(&mut out);
    Verdict {
        status: if degraded { "degraded" } else { "healthy" }.into(),
        findings: out,
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
#[path = "scenario_tests.rs"]
mod scenarios;

#[cfg(test)]
#[path = "aux_scenario_tests.rs"]
mod aux_scenarios;
