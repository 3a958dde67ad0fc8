//! What the doctor says, as data a program can match: a stable code per kind of
//! finding, what it is about, its numbers and the fix, beside the sentence for people.
//! The codes are the doctor's interface: renaming one breaks the fleets that alert on it.

use serde::{Deserialize, Serialize};

/// The version of the `doctor --json` document; raised when a field changes meaning or
/// goes away (new fields and new codes do not raise it).
pub const SCHEMA_VERSION: u32 = 1;

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Works as it should (only ever said under a healthy verdict).
    Ok,
    /// Worth knowing, no action needed.
    Note,
    /// May cost speed elsewhere; look into it.
    Warning,
    /// Time calls are slower than this machine allows: act.
    Degraded,
}

impl Severity {
    /// The lowercase name, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Ok => "ok",
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Degraded => "degraded",
        }
    }
}

/// Where a finding stands in the story, which is also the order they are told in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Why calls are slow: fix this and the symptoms go away.
    Cause,
    /// A call that is slower than it should be, and by how much.
    Symptom,
    /// Circumstances: the machine, the method, what is fine.
    Context,
}

macro_rules! codes {
    ($( #[doc = $doc:literal] $name:ident = $text:literal, )*) => {
        /// The stable identifier of a kind of finding.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum Code {
            $( #[doc = $doc] #[serde(rename = $text)] $name, )*
        }

        impl Code {
            /// Every code, in the order docs/doctor.md and vdsotime-doctor(1) list them.
            pub const ALL: &'static [Code] = &[$(Code::$name),*];

            /// The code as written in JSON and metrics.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( Code::$name => $text, )*
                }
            }

            /// What the code means, in one sentence (its documentation above).
            pub fn meaning(self) -> &'static str {
                match self {
                    $( Code::$name => $doc.trim(), )*
                }
            }
        }
    };
}

codes! {
    /// The process has no vDSO: every time call is a system call.
    NoVdso = "no_vdso",
    /// The kernel marked the TSC unstable and runs on another clocksource.
    TscMarkedUnstable = "tsc_marked_unstable",
    /// The current clocksource cannot be read by the vDSO: counter clocks enter the kernel.
    ClocksourceNotVdsoCapable = "clocksource_not_vdso_capable",
    /// The vDSO lacks a symbol this architecture's kernels export.
    VdsoSymbolMissing = "vdso_symbol_missing",
    /// An enabled auxiliary clock enters the kernel while the vDSO serves MONOTONIC.
    VdsoLacksAuxClocks = "vdso_lacks_aux_clocks",
    /// A call the vDSO should answer enters the kernel (function and clock in `subject`).
    ClockServedBySyscall = "clock_served_by_syscall",
    /// The C library makes a system call where the vDSO would answer.
    LibcMakesSyscall = "libc_makes_syscall",
    /// The CPU does not promise an invariant TSC (constant_tsc and nonstop_tsc).
    TscNotInvariant = "tsc_not_invariant",
    /// The machine is a virtual machine.
    VirtualMachine = "virtual_machine",
    /// The process runs in a time namespace with offsets.
    TimeNamespace = "time_namespace",
    /// The current clocksource could not be read (no /sys).
    ClocksourceUnknown = "clocksource_unknown",
    /// The seccomp proof could not run here; paths are judged by timing.
    SeccompUnavailable = "seccomp_unavailable",
    /// The kernel log could not be read: a TSC marked unstable would go unseen.
    KernelLogUnreadable = "kernel_log_unreadable",
    /// The kernel has auxiliary clocks, none of them enabled: nothing to prove.
    AuxClocksNoneEnabled = "aux_clocks_none_enabled",
    /// The vDSO answers every time call without entering the kernel.
    VdsoServesAll = "vdso_serves_all",
    /// The clocksource is one the vDSO reads.
    ClocksourceVdsoCapable = "clocksource_vdso_capable",
    /// getcpu is answered from the rseq area glibc registered, with no call at all.
    GetcpuFromRseq = "getcpu_from_rseq",
    /// Every enabled auxiliary clock is answered in user space.
    AuxClocksServed = "aux_clocks_served",
}

/// What a finding is about; any subset.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subject {
    /// `clock_gettime`, `gettimeofday`, `time`, `clock_getres`, `getcpu`, `getrandom`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub function: Option<String>,
    /// `MONOTONIC`, `REALTIME`, ... for the functions that take a clock.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub clock: Option<String>,
    /// The clocksource the finding is about.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub clocksource: Option<String>,
}

/// The concrete change that removes a cause.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fix {
    /// The clocksource to switch to (listed in available_clocksource).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub clocksource: Option<String>,
    /// The shell command that switches now, as root.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sysfs: Option<String>,
    /// The kernel command-line change that keeps it across reboots.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub boot: Option<String>,
    /// The kernel to run instead, where no setting of this one helps.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub kernel: Option<String>,
}

/// One thing the doctor found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable identifier.
    pub code: Code,
    /// How bad.
    pub severity: Severity,
    /// Cause, symptom or context.
    pub role: Role,
    /// What, why, and what to do, for people.
    pub message: String,
    /// What it is about.
    #[serde(default)]
    pub subject: Subject,
    /// ns per call through vdsotime (its user-space route), where measured.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub vdso_ns: Option<f64>,
    /// ns per call of the forced system call, where measured.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub syscall_ns: Option<f64>,
    /// ns per call through the C library, where it matters.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub libc_ns: Option<f64>,
    /// The change that removes the cause, where there is one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub fix: Option<Fix>,
}

impl Finding {
    /// A finding with no subject, numbers or fix yet.
    pub fn new(code: Code, severity: Severity, role: Role, message: impl Into<String>) -> Self {
        Finding {
            code,
            severity,
            role,
            message: message.into(),
            subject: Subject::default(),
            vdso_ns: None,
            syscall_ns: None,
            libc_ns: None,
            fix: None,
        }
    }

    /// Sets the subject.
    pub fn about(mut self, subject: Subject) -> Self {
        self.subject = subject;
        self
    }

    /// Sets the measured costs.
    pub fn costs(mut self, vdso_ns: Option<f64>, syscall_ns: Option<f64>) -> Self {
        self.vdso_ns = vdso_ns;
        self.syscall_ns = syscall_ns;
        self
    }

    /// Sets the fix.
    pub fn fix(mut self, fix: Fix) -> Self {
        self.fix = Some(fix);
        self
    }
}

/// Orders findings for telling: causes, then symptoms, then context; worst first
/// within each, except that the `ok` findings (said only under a healthy verdict, they
/// are its evidence) lead the context; otherwise in the order they were found. So the
/// first finding is the cause on a degraded machine and the verdict's evidence
/// (`vdso_serves_all`) on a healthy one, and circumstances such as `virtual_machine`
/// come last.
pub fn sort(findings: &mut [Finding]) {
    findings.sort_by_key(|f| {
        let circumstance = f.severity != Severity::Ok;
        (f.role, circumstance, std::cmp::Reverse(f.severity))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_snake_case_and_serialize_as_written() {
        let mut seen = std::collections::HashSet::new();
        for &c in Code::ALL {
            let s = c.as_str();
            assert!(seen.insert(s), "{s} twice");
            assert!(
                s.chars().all(|ch| ch.is_ascii_lowercase() || ch == '_'),
                "{s}"
            );
            assert_eq!(serde_json::to_value(c).unwrap(), s);
        }
    }

    #[test]
    fn the_documentation_lists_every_code_in_order() {
        let doc =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/doctor.md"))
                .expect("docs/doctor.md");
        let mut at = 0;
        for &c in Code::ALL {
            let row = format!("| `{}` |", c.as_str());
            let found = doc[at..].find(&row);
            assert!(
                found.is_some(),
                "docs/doctor.md has no row {row} after byte {at}"
            );
            at += found.unwrap_or(0);
        }
        for marker in ["<!-- scenarios:begin -->", "<!-- scenarios:end -->"] {
            assert_eq!(doc.matches(marker).count(), 1, "{marker}");
        }
    }

    #[test]
    fn causes_come_before_worse_symptoms() {
        let mut v = vec![
            Finding::new(
                Code::ClockServedBySyscall,
                Severity::Degraded,
                Role::Symptom,
                "s",
            ),
            Finding::new(Code::VirtualMachine, Severity::Note, Role::Context, "c"),
            Finding::new(Code::TscMarkedUnstable, Severity::Warning, Role::Cause, "w"),
            Finding::new(Code::NoVdso, Severity::Degraded, Role::Cause, "n"),
        ];
        sort(&mut v);
        let order: Vec<Code> = v.iter().map(|f| f.code).collect();
        assert_eq!(
            order,
            [
                Code::NoVdso,
                Code::TscMarkedUnstable,
                Code::ClockServedBySyscall,
                Code::VirtualMachine
            ]
        );
    }
}
