//! The doctor's judgement: a pure function from a [`Profile`] to findings, so any
//! machine (a real one, or a simulated fall-back) can be judged in a test.

use serde::{Deserialize, Serialize};

use crate::output;
use crate::profile::{Cost, Profile};

/// A vDSO call costing more than this share of the syscall is not served by the
/// vDSO: it falls back to the kernel inside the vDSO. A served call costs 5–15% of
/// the syscall on every machine in the seeds; a fallback 100% or more.
pub const FALLBACK_RATIO: f64 = 0.5;

/// Clocksources the x86 vDSO cannot read: every high-resolution read becomes a syscall.
const X86_SLOW: [&str; 6] = [
    "hpet",
    "acpi_pm",
    "xen",
    "pit",
    "jiffies",
    "refined-jiffies",
];
/// Clocksources the vDSO reads directly.
const FAST: [&str; 8] = [
    "tsc",
    "kvm-clock",
    "hyperv_clocksource_tsc_page",
    "arch_sys_counter",
    "riscv_clocksource",
    "timebase",
    "tod",
    "Constant",
];
const SYSFS: &str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Works as it should.
    Ok,
    /// Worth knowing, no action needed.
    Note,
    /// May cost speed or correctness elsewhere; look into it.
    Warning,
    /// Time calls are slower than they should be: act.
    Degraded,
}

/// One sentence about the machine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// How bad.
    pub severity: Severity,
    /// What, why, and what to do.
    pub message: String,
}

/// The doctor's verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// `healthy` or `degraded`.
    pub status: String,
    /// Every finding, worst first.
    pub findings: Vec<Finding>,
}

impl Verdict {
    /// Whether any finding is `Degraded`.
    pub fn degraded(&self) -> bool {
        self.status == "degraded"
    }
}

fn is_x86(machine: &str) -> bool {
    matches!(machine, "x86_64" | "i386" | "i486" | "i586" | "i686")
}

/// Clocks whose fall-back costs every program on the machine: degraded.
/// Others (BOOTTIME, TAI, MONOTONIC_RAW) were added to the vDSO later (5.3 on x86).
fn essential(c: &Cost) -> bool {
    match c.clock.as_deref() {
        Some(name) => matches!(
            name,
            "CLOCK_REALTIME"
                | "CLOCK_MONOTONIC"
                | "CLOCK_REALTIME_COARSE"
                | "CLOCK_MONOTONIC_COARSE"
        ),
        None => c.function == "gettimeofday" || c.function == "time",
    }
}

fn judge_cost(c: &Cost, out: &mut Vec<Finding>) {
    let ratio = c.vdsotime_ns / c.syscall_ns;
    let speed = format!(
        "{} ns against {} ns for the syscall",
        output::ns(c.vdsotime_ns),
        output::ns(c.syscall_ns)
    );
    let vdso_fast = c.via_vdso() && ratio <= FALLBACK_RATIO;
    if !c.via_vdso() {
        out.push(Finding {
            severity: Severity::Note,
            message: format!(
                "{} has no vDSO entry on this architecture, so it is a system call ({speed}).",
                c.label()
            ),
        });
    } else if vdso_fast {
        out.push(Finding {
            severity: Severity::Ok,
            message: format!(
                "{} is served by the vDSO: {speed} ({} faster).",
                c.label(),
                output::ratio(c.syscall_ns / c.vdsotime_ns)
            ),
        });
    } else {
        let severity = if essential(c) {
            Severity::Degraded
        } else {
            Severity::Warning
        };
        let why = if c.function == "getcpu" {
            "the vDSO's getcpu cannot read the CPU number on this machine"
        } else if essential(c) {
            "the clocksource cannot be read from user space"
        } else {
            "the clocksource cannot be read from user space, or the kernel (before 5.3 on x86) does not serve this clock in the vDSO"
        };
        out.push(Finding {
            severity,
            message: format!(
                "{} goes through the vDSO but costs as much as a system call ({speed}): the vDSO falls back to the kernel because {why}.",
                c.label()
            ),
        });
    }
    if let Some(l) = c.libc_ns {
        if vdso_fast && l / c.syscall_ns > FALLBACK_RATIO {
            out.push(Finding {
                severity: Severity::Warning,
                message: format!(
                    "Your C library makes a system call for {} ({} ns, while vdsotime takes {} ns): programs calling it through libc pay the syscall; link vdsotime or its preload library.",
                    c.label(),
                    output::ns(l),
                    output::ns(c.vdsotime_ns)
                ),
            });
        }
    }
}

fn judge_clocksource(p: &Profile, out: &mut Vec<Finding>) {
    let f = &p.facts;
    let Some(cs) = f.clocksource.as_deref() else {
        out.push(Finding {
            severity: Severity::Note,
            message: "The current clocksource is unreadable (no /sys): judged by measurement only."
                .into(),
        });
        return;
    };
    let x86 = is_x86(&f.machine);
    if x86 && X86_SLOW.contains(&cs) {
        let better: Vec<&str> = FAST
            .iter()
            .copied()
            .filter(|g| f.clocksources_available.iter().any(|a| a == g))
            .collect();
        let advice = match better.first() {
            Some(b) => format!(
                " Switch now with `echo {b} > {SYSFS}` (as root) and keep it across reboots with the kernel parameter `clocksource={b}`."
            ),
            None => " No vDSO-capable clocksource is offered (available: ".to_string()
                + &f.clocksources_available.join(" ")
                + "); if the kernel marked the TSC unstable, fix the firmware/hypervisor TSC settings or boot with `tsc=reliable` only if you know the TSC is synchronized.",
        };
        out.push(Finding {
            severity: Severity::Degraded,
            message: format!(
                "The clocksource is {cs}, which the x86 vDSO cannot read: every high-resolution clock read becomes a system call.{advice}"
            ),
        });
    } else if FAST.contains(&cs) {
        let mut msg = format!("The clocksource is {cs}, which the vDSO reads directly.");
        if cs == "kvm-clock" && f.clocksources_available.iter().any(|a| a == "tsc") {
            msg.push_str(" tsc is also available and is slightly faster when the host's TSC is stable; switching is optional.");
        }
        out.push(Finding {
            severity: Severity::Ok,
            message: msg,
        });
    } else {
        out.push(Finding {
            severity: Severity::Note,
            message: format!("The clocksource is {cs}; whether the vDSO can read it is judged by the measurements above."),
        });
    }
}

fn judge_machine(p: &Profile, out: &mut Vec<Finding>) {
    let f = &p.facts;
    if is_x86(&f.machine)
        && f.cpu_flags.known
        && !(f.cpu_flags.constant_tsc && f.cpu_flags.nonstop_tsc)
    {
        out.push(Finding {
            severity: Severity::Warning,
            message: "The CPU does not report both constant_tsc and nonstop_tsc: the kernel may declare the TSC unstable and move to a clocksource the vDSO cannot read.".into(),
        });
    }
    if f.tsc_marked_unstable == Some(true) {
        out.push(Finding {
            severity: Severity::Warning,
            message: "The kernel log says \"Marking TSC unstable\": the TSC clocksource was rejected, usually by the watchdog on a VM or a broken BIOS; check the clocksource above.".into(),
        });
    }
    if let Some(hv) = &f.hypervisor {
        let cs = f.clocksource.as_deref().unwrap_or("");
        let tail = if cs == "xen" {
            " Under Xen the xen clocksource forces every read into the kernel; ask for a TSC-stable instance type or set `clocksource=tsc tsc=reliable` where the provider supports it."
        } else {
            " Virtual machines are fine when the clocksource is tsc, kvm-clock or hyperv_clocksource_tsc_page."
        };
        out.push(Finding {
            severity: Severity::Note,
            message: format!("This is a virtual machine ({hv}).{tail}"),
        });
    }
    let offsets: Vec<String> = f
        .timens_offsets
        .iter()
        .filter(|o| o.secs != 0 || o.nsecs != 0)
        .map(|o| format!("{} {}s {}ns", o.clock, o.secs, o.nsecs))
        .collect();
    if !offsets.is_empty() {
        out.push(Finding {
            severity: Severity::Note,
            message: format!(
                "This process runs in a time namespace ({}): MONOTONIC and BOOTTIME are shifted. The kernel's vDSO code applies the offsets, so vdsotime is correct; tools that read the vDSO data page themselves are not.",
                offsets.join(", ")
            ),
        });
    }
}

/// Judges a profile. Pure: same profile, same verdict.
pub fn classify(p: &Profile) -> Verdict {
    let mut out = Vec::new();
    if !p.has_vdso {
        out.push(Finding {
            severity: Severity::Degraded,
            message: "This process has no vDSO (running under valgrind, booted with vdso=0, or a sandbox that hides it): every time call is a system call.".into(),
        });
    } else {
        for m in &p.missing_symbols {
            let severity = if m.contains("clock_gettime") {
                Severity::Degraded
            } else {
                Severity::Warning
            };
            out.push(Finding {
                severity,
                message: format!(
                    "The vDSO does not export {m}, which {} kernels provide: that function falls back to the system call.",
                    p.arch
                ),
            });
        }
    }
    for c in &p.costs {
        judge_cost(c, &mut out);
    }
    judge_clocksource(p, &mut out);
    judge_machine(p, &mut out);
    out.sort_by_key(|f| std::cmp::Reverse(f.severity));
    let degraded = out.iter().any(|f| f.severity == Severity::Degraded);
    Verdict {
        status: if degraded { "degraded" } else { "healthy" }.into(),
        findings: out,
    }
}

#[cfg(test)]
#[path = "classify_tests.rs"]
mod tests;
