//! The doctor's root causes: why calls are slow, each with the change that fixes it.
//! Told before the symptoms they explain.

use crate::doctor::call_paths::PathKind;
use crate::doctor::classify::clocksources::{self, Readable};
use crate::doctor::classify::scene::Scene;
use crate::doctor::findings::{Code, Finding, Fix, Role, Severity, Subject};
use crate::doctor::seccomp::Method;

/// No vDSO at all: one finding, naming the real causes, instead of one per call.
pub fn no_vdso(s: &Scene, out: &mut Vec<Finding>) {
    let f = &s.p.facts;
    let mut msg = String::from(
        "This process has no vDSO (its auxiliary vector has no AT_SYSINFO_EHDR), so every time call is a system call",
    );
    if let Some(r) = s.reference() {
        msg += &format!(" ({} costs {} ns)", r.label(), s.ns(r.vdso_ns));
    }
    msg += ". A process has no vDSO when the kernel was booted with `vdso=0`, or when it runs under an emulator or tool that provides none, such as valgrind.";
    let mut fix = None;
    if f.boot_param("vdso") == Some("0") {
        msg += " Here the kernel command line has `vdso=0` (/proc/cmdline): remove it from the boot loader's configuration and reboot.";
        fix = Some(Fix {
            boot: Some("remove vdso=0".into()),
            ..Fix::default()
        });
    } else if let Some(tool) = &f.emulator {
        msg += &format!(
            " Here the process runs under {tool}: the program run on its own has the machine's vDSO."
        );
    } else if f.kernel_cmdline.is_some() {
        msg += " The kernel command line has no `vdso=0`, so look for what runs this process (an emulator, a sandbox that hides the vDSO).";
    }
    if s.path("getcpu", None)
        .is_some_and(|e| e.path == PathKind::Rseq)
    {
        msg += " getcpu() is still answered in user space, from the rseq area glibc registered.";
    }
    let mut finding = Finding::new(Code::NoVdso, Severity::Degraded, Role::Cause, msg);
    if let Some(r) = s.reference() {
        finding = finding.costs(r.vdso_ns, r.syscall_ns);
    }
    out.push(match fix {
        Some(fix) => finding.fix(fix),
        None => finding,
    });
}

/// How the kernel's rejection of the TSC shows.
enum TscEvidence {
    /// `tsc=unstable` or `notsc` on the command line.
    BootParam(&'static str),
    /// "Marking TSC unstable due to REASON" in the kernel log.
    Log(String),
    /// The log says the TSC was found unstable, without a reason.
    LogUnspecified,
    /// The CPU has a TSC, the kernel offers other clocksources but not it.
    Inferred,
}

fn tsc_evidence(s: &Scene) -> Option<TscEvidence> {
    let f = &s.p.facts;
    if !clocksources::is_x86(&f.machine) {
        return None;
    }
    if f.boot_param("tsc") == Some("unstable") {
        return Some(TscEvidence::BootParam("tsc=unstable"));
    }
    if f.boot_param("notsc").is_some() {
        return Some(TscEvidence::BootParam("notsc"));
    }
    if let Some(r) = &f.tsc_unstable_reason {
        return Some(TscEvidence::Log(r.clone()));
    }
    if f.tsc_marked_unstable == Some(true) {
        return Some(TscEvidence::LogUnspecified);
    }
    let offered = |n: &str| f.clocksources_available.iter().any(|a| a == n);
    // tsc-early listed: the kernel still trusts the TSC and has not yet renamed it tsc.
    let tsc_listed = offered("tsc") || offered("tsc-early");
    let current_tsc = f.clocksource.as_deref() == Some("tsc");
    (f.cpu_flags.tsc && !f.clocksources_available.is_empty() && !tsc_listed && !current_tsc)
        .then_some(TscEvidence::Inferred)
}

/// The TSC marked unstable: the cause behind a slow x86 clocksource that nobody chose.
pub fn tsc_unstable(s: &Scene, out: &mut Vec<Finding>) {
    let Some(evidence) = tsc_evidence(s) else {
        return;
    };
    let f = &s.p.facts;
    let cs = f
        .clocksource
        .clone()
        .unwrap_or_else(|| "another clocksource".into());
    let why = match &evidence {
        TscEvidence::BootParam(p) => format!("the kernel command line has `{p}`"),
        TscEvidence::Log(r) => format!("the kernel log says \"Marking TSC unstable due to {r}\""),
        TscEvidence::LogUnspecified => "the kernel log says it found the TSC unstable".into(),
        TscEvidence::Inferred => format!(
            "the CPU has a TSC but the kernel no longer offers it: available_clocksource lists only {}",
            f.clocksources_available.join(" ")
        ),
    };
    let slow = s.slow_clocksource.is_some();
    let mut msg = format!("The kernel marked the TSC unstable ({why}), so the clocksource is {cs}");
    msg += if slow {
        ", which the vDSO cannot read: every clock_gettime and gettimeofday of a counter clock is a system call."
    } else {
        "."
    };
    let mut fix = Fix::default();
    match &evidence {
        TscEvidence::BootParam(p) => {
            msg += &format!(" With `{p}` the kernel never registers the TSC as a clocksource, so it cannot be selected: remove `{p}` from the kernel command line and reboot.");
            fix.boot = Some(format!("remove {p}"));
        }
        TscEvidence::Log(r) if r.contains("watchdog") => {
            msg += " The clocksource watchdog saw the TSC drift against another clock. A TSC marked unstable stays unusable until the next boot: the kernel no longer lists it in available_clocksource and refuses to select it. On a physical machine, update the firmware and check that the CPU reports constant_tsc and nonstop_tsc; on a virtual machine, ask for a stable (invariant) TSC from the host or use its paravirtual clock. If you know the TSCs are synchronized, the kernel parameter `tsc=reliable` stops the watchdog from rejecting the TSC on the next boot.";
            fix.boot = Some("tsc=reliable".into());
        }
        _ => {
            msg += " A TSC marked unstable stays unusable until the next boot: the kernel no longer lists it in available_clocksource and refuses to select it. Check the kernel log (dmesg | grep -i tsc) for the reason; if you know the TSCs are synchronized, the kernel parameter `tsc=reliable` keeps the TSC on the next boot.";
        }
    }
    if let Some(b) = clocksources::better(&f.clocksources_available, &cs) {
        msg += &format!(
            " Until then: {}",
            clocksources::switch_sentence(&b, &f.clocksources_available)
        );
        let sw = clocksources::switch_to(&b);
        fix.clocksource = sw.clocksource;
        fix.sysfs = sw.sysfs;
    }
    let severity = if slow {
        Severity::Degraded
    } else {
        Severity::Warning
    };
    out.push(
        Finding::new(Code::TscMarkedUnstable, severity, Role::Cause, msg)
            .about(Subject {
                clocksource: f.clocksource.clone(),
                ..Subject::default()
            })
            .fix(fix),
    );
}

/// A clocksource the vDSO cannot read.
pub fn clocksource(s: &Scene, out: &mut Vec<Finding>) {
    let (Some(method), Some(cs)) = (s.slow_clocksource, s.p.facts.clocksource.as_deref()) else {
        return;
    };
    let f = &s.p.facts;
    let proof = match method {
        Method::Seccomp => " (proved: under a seccomp filter, the vDSO's clock_gettime(MONOTONIC) made the system call)",
        Method::Timing => " (judged by timing)",
        Method::Lookup => "",
    };
    let mut msg = format!("The clocksource is {cs}, which the vDSO cannot read{proof}");
    match (s.p.has_vdso, s.reference()) {
        (true, Some(r)) => {
            msg += &format!(
                ": every clock_gettime and gettimeofday of a counter clock enters the kernel ({} costs {} ns against {} ns for the system call).",
                r.label(),
                s.ns(r.vdso_ns),
                s.ns(r.syscall_ns)
            );
        }
        (true, None) => msg += ": every counter-clock read enters the kernel.",
        (false, _) => msg += ", so a vDSO would not help these calls either.",
    }
    if clocksources::readable(cs) == Readable::Conditional {
        msg += &format!(" The vDSO reads {cs} only when the hypervisor marks it stable, which this one does not.");
    }
    if f.boot_param("clocksource") == Some(cs) {
        msg += &format!(" The kernel command line selects it (`clocksource={cs}`).");
    }
    let better = clocksources::better(&f.clocksources_available, cs);
    let mut finding = Finding::new(
        Code::ClocksourceNotVdsoCapable,
        if s.p.has_vdso {
            Severity::Degraded
        } else {
            Severity::Warning
        },
        Role::Cause,
        String::new(),
    )
    .about(Subject {
        clocksource: Some(cs.to_string()),
        ..Subject::default()
    });
    if let Some(r) = s.reference() {
        finding = finding.costs(r.vdso_ns, r.syscall_ns);
    }
    match better {
        Some(b) => {
            msg += " ";
            msg += &clocksources::switch_sentence(&b, &f.clocksources_available);
            finding = finding.fix(clocksources::switch_to(&b));
        }
        None => {
            msg += &format!(
                " No clocksource the vDSO can read is offered (available_clocksource: {}).",
                f.clocksources_available.join(" ")
            );
            if tsc_evidence(s).is_some() {
                msg += " The TSC was marked unstable (above).";
            } else if clocksources::is_x86(&f.machine) {
                msg += " On a virtual machine, ask the provider for an instance type with a stable TSC.";
            }
        }
    }
    finding.message = msg;
    out.push(finding);
}

/// vDSO symbols this architecture's kernels export but this vDSO lacks.
pub fn missing_symbols(s: &Scene, out: &mut Vec<Finding>) {
    if !s.p.has_vdso {
        return;
    }
    for m in &s.p.missing_symbols {
        let severity = if m.contains("clock_gettime") {
            Severity::Degraded
        } else {
            Severity::Warning
        };
        let name = m.split('@').next().unwrap_or(m);
        let function = name
            .trim_start_matches("__vdso_")
            .trim_start_matches("__kernel_");
        out.push(
            Finding::new(
                Code::VdsoSymbolMissing,
                severity,
                Role::Cause,
                format!(
                    "The vDSO does not export {m}, which {} kernels provide: that function is a system call in this process.",
                    s.p.arch
                ),
            )
            .about(Subject {
                function: Some(function.to_string()),
                ..Subject::default()
            }),
        );
    }
}
