//! Why a process entered the kernel for the time: each reason is checked against the
//! clock id, the process's facts and the host's, in a fixed order, and the first that
//! holds is the row's. Its code is stable (scripts match on it); its fix is for people.

use crate::top::clocks::{self, Kind};
use crate::top::host::Host;
use crate::top::process::{Facts, Libc};
use crate::top::syscalls::Call;

/// A reason, by its stable code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reason {
    /// A CPU-time clock: the vDSO never serves them.
    CpuTimeClock,
    /// A dynamic (fd) clock.
    DynamicClock,
    /// An auxiliary clock that is not enabled.
    AuxClockDisabled,
    /// Another clock id the vDSO never serves (alarm clocks, invalid ids).
    ClockNotInVdso,
    /// No `[vdso]` in the process's maps.
    NoVdsoMapping,
    /// The clocksource cannot be read by the vDSO (the doctor's proof).
    Clocksource,
    /// getrandom without a vDSO state: the kernel's vDSO or the C library lacks it.
    GetrandomNoVdso,
    /// A static binary: code linked into it made the call.
    StaticBinary,
    /// The process exited before it could be examined.
    ExitedUnchecked,
    /// Nothing else explains it: the program calls the kernel itself.
    DirectSyscall,
}

/// Every reason, in the order they are checked, with its code and what it means: the
/// man page and docs/top.md list this table. Each meaning says what was checked.
pub const ALL: [(Reason, &str, &str); 10] = [
    (Reason::CpuTimeClock, "cpu_time_clock", "a CPU-time clock (CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID, clock_getcpuclockid): the vDSO never serves them"),
    (Reason::DynamicClock, "dynamic_clock", "a dynamic clock (a file descriptor's, e.g. a PTP device): always the kernel"),
    (Reason::AuxClockDisabled, "aux_clock_disabled", "an auxiliary clock (CLOCK_AUX0..7) that is not enabled"),
    (Reason::ClockNotInVdso, "clock_not_in_vdso", "another clock id the vDSO never serves (alarm clocks, ids the kernel refuses)"),
    (Reason::NoVdsoMapping, "no_vdso_mapping", "the process has no [vdso] mapping in /proc/PID/maps"),
    (Reason::Clocksource, "clocksource", "the doctor proved here that the vDSO falls back to the system call for CLOCK_MONOTONIC, and the call reads the clocksource: gettimeofday, or clock_gettime of REALTIME, MONOTONIC, MONOTONIC_RAW, BOOTTIME, TAI or an aux clock (never the coarse clocks or time())"),
    (Reason::GetrandomNoVdso, "getrandom_no_vdso", "getrandom, and this process's vDSO lacks __vdso_getrandom (Linux 6.11+), or the C library mapped is not one that calls it (glibc 2.41+ by its GLIBC_2.N versions; Go 1.24+ calls it itself on amd64, arm64, ppc64x, loong64, s390x)"),
    (Reason::StaticBinary, "static_binary", "a static program (no PT_INTERP) that nowhere names its architecture's vDSO clock_gettime, so no code in it can call the vDSO"),
    (Reason::ExitedUnchecked, "exited_unchecked", "the process could not be examined: it exited before its /proc entry could be read, or it is outside this PID namespace (pid 0); only its clock id was checked"),
    (Reason::DirectSyscall, "direct_syscall", "none of the above: the program enters the kernel itself (syscall(), inline assembly, a runtime without vDSO support)"),
];

impl Reason {
    /// The stable code.
    pub fn code(self) -> &'static str {
        ALL.iter()
            .find(|(r, ..)| *r == self)
            .map_or("", |(_, c, _)| c)
    }
}

/// A judged row: the reason and its fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judged {
    /// The reason.
    pub reason: Reason,
    /// What to change, in a sentence.
    pub fix: String,
}

fn judged(reason: Reason, fix: impl Into<String>) -> Judged {
    Judged {
        reason,
        fix: fix.into(),
    }
}

/// Why the C library of `p` does not call the vDSO's getrandom, from what was checked
/// (the library its mappings name, glibc's version definitions); `None` where it does,
/// or where nothing could be checked (the process had exited).
fn getrandom_libc(p: &Facts) -> Option<String> {
    const LATER: &str = "glibc 2.41 or later calls the vDSO's getrandom (so does the preload library, libvdsotime_preload.so)";
    match &p.libc {
        Some(Libc::Glibc(Some(v))) if *v >= (2, 41) => None,
        Some(Libc::Glibc(Some((a, b)))) => Some(format!("checked: it maps glibc whose newest version is GLIBC_{a}.{b}; {LATER}")),
        Some(Libc::Glibc(None)) => Some(format!("checked: it maps glibc, whose version could not be read; {LATER}")),
        Some(Libc::Musl) => Some(format!("checked: it maps musl, which makes the system call; {LATER}")),
        None if p.seen => Some("checked: it maps no C library top recognises (glibc, musl): a runtime of its own made the call. Go 1.24 and later calls the vDSO's getrandom on amd64, arm64, ppc64x, loong64 and s390x, and the system call elsewhere".into()),
        None => None,
    }
}

/// The reason `call` (with clock `clock`) entered the kernel for process `p` on `host`.
pub fn judge(call: Call, clock: Option<i32>, p: &Facts, host: &Host) -> Judged {
    if let Some(id) = clock {
        let name = clocks::name(id);
        match clocks::kind(id, &host.aux_enabled) {
            Kind::CpuTime => return judged(Reason::CpuTimeClock, format!("{name} is a CPU-time clock, never served by the vDSO: read it less often, or use CLOCK_MONOTONIC where elapsed time is meant")),
            Kind::Dynamic => return judged(Reason::DynamicClock, format!("{name} is a dynamic clock, always read in the kernel: read it less often, or steer the system clock to it (phc2sys) and read CLOCK_REALTIME")),
            Kind::AuxDisabled => return judged(Reason::AuxClockDisabled, format!("enable it: echo 1 > /sys/kernel/time/aux_clocks/{}/aux_clock_enable", id - 16)),
            Kind::NotServed => return judged(Reason::ClockNotInVdso, format!("{name} is not a clock the vDSO serves: use CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME or CLOCK_TAI")),
            Kind::Served => {}
        }
    }
    if p.seen && p.has_vdso == Some(false) {
        return judged(Reason::NoVdsoMapping, "the process runs without a vDSO (vdso=0 on the kernel command line, an emulator, or a loader that unmapped it): run it where a vDSO is mapped");
    }
    if call.reads_clocksource()
        && clock.is_none_or(clocks::reads_clocksource)
        && host.clocksource_slow
    {
        let cs = host.clocksource.as_deref().unwrap_or("unknown");
        return judged(Reason::Clocksource, format!("the clocksource {cs} cannot be read by the vDSO: run `vdsotime doctor` for the cause and the fix"));
    }
    if call == Call::Getrandom {
        if !host.vdso_getrandom {
            return judged(
                Reason::GetrandomNoVdso,
                "checked: this kernel's vDSO exports no __vdso_getrandom; Linux 6.11 or later adds it",
            );
        }
        if let Some(why) = getrandom_libc(p) {
            return judged(Reason::GetrandomNoVdso, why);
        }
    }
    // A static program whose C library or runtime calls the vDSO looks its symbols up by
    // name: one without the name cannot call it.
    let static_without_vdso = p
        .program
        .as_ref()
        .is_some_and(|e| e.names_the_vdso == Some(false));
    if p.seen && static_without_vdso {
        return judged(Reason::StaticBinary, "a static binary that never names the vDSO's functions, so its C library or runtime cannot call them: link it dynamically, or with a C library that calls the vDSO");
    }
    if !p.seen && p.comm == crate::top::process::OUTSIDE {
        return judged(
            Reason::ExitedUnchecked,
            "processes outside this PID namespace cannot be examined from it: run vdsotime top in the host's namespace to see each",
        );
    }
    if !p.seen {
        return judged(
            Reason::ExitedUnchecked,
            "the process exited before it could be examined: watch while it runs",
        );
    }
    judged(Reason::DirectSyscall, format!("the program calls {} itself rather than through its C library, which would use the vDSO: call the C library's function", call.name()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::top::binary::Exe;

    fn running() -> Facts {
        Facts {
            comm: "x".into(),
            seen: true,
            has_vdso: Some(true),
            program: Some(Exe {
                class: vdsotime::ElfClass::Elf64,
                interp: Some("/lib64/ld-linux-x86-64.so.2".into()),
                names_the_vdso: None,
            }),
            libc: Some(Libc::Glibc(Some((2, 41)))),
            ..Facts::default()
        }
    }

    fn host() -> Host {
        Host {
            vdso_getrandom: true,
            ..Host::default()
        }
    }

    #[test]
    fn the_codes_are_unique_and_every_reason_has_one() {
        let mut codes: Vec<_> = ALL.iter().map(|(_, c, _)| *c).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), ALL.len());
        assert_eq!(Reason::DirectSyscall.code(), "direct_syscall");
    }

    #[test]
    fn each_check_in_its_order() {
        let p = running();
        let h = host();
        let r = |call, clock, p: &Facts, h: &Host| judge(call, clock, p, h).reason;
        assert_eq!(r(Call::ClockGettime, Some(2), &p, &h), Reason::CpuTimeClock);
        assert_eq!(
            r(Call::ClockGettime, Some(1), &p, &h),
            Reason::DirectSyscall
        );
        let slow = Host {
            clocksource_slow: true,
            clocksource: Some("hpet".into()),
            ..host()
        };
        assert_eq!(
            r(Call::ClockGettime, Some(1), &p, &slow),
            Reason::Clocksource
        );
        assert_eq!(r(Call::Getcpu, None, &p, &slow), Reason::DirectSyscall);
        let novdso = Facts {
            has_vdso: Some(false),
            ..running()
        };
        assert_eq!(
            r(Call::ClockGettime, Some(1), &novdso, &slow),
            Reason::NoVdsoMapping
        );
        // A tracer is a flag on the row, not a reason: the real cause shows.
        let traced = Facts {
            tracer: Some((9, "strace".into())),
            ..running()
        };
        assert_eq!(
            r(Call::ClockGettime, Some(2), &traced, &h),
            Reason::CpuTimeClock
        );
        // The coarse clocks and time() never read the clocksource.
        assert_eq!(
            r(Call::ClockGettime, Some(6), &p, &slow),
            Reason::DirectSyscall
        );
        assert_eq!(r(Call::Time, None, &p, &slow), Reason::DirectSyscall);
        assert_eq!(r(Call::Gettimeofday, None, &p, &slow), Reason::Clocksource);
        let musl = Facts {
            libc: Some(Libc::Musl),
            ..running()
        };
        let why = judge(Call::Getrandom, None, &musl, &h);
        assert_eq!(why.reason, Reason::GetrandomNoVdso);
        assert!(why.fix.contains("musl"), "{why:?}");
        let old = Facts {
            libc: Some(Libc::Glibc(Some((2, 36)))),
            ..running()
        };
        assert_eq!(r(Call::Getrandom, None, &old, &h), Reason::GetrandomNoVdso);
        assert_eq!(
            r(Call::Getrandom, None, &p, &Host::default()),
            Reason::GetrandomNoVdso
        );
        let static_exe = |names_the_vdso| Facts {
            program: Some(Exe {
                class: vdsotime::ElfClass::Elf64,
                interp: None,
                names_the_vdso: Some(names_the_vdso),
            }),
            ..running()
        };
        assert_eq!(
            r(Call::Time, None, &static_exe(false), &h),
            Reason::StaticBinary
        );
        assert_eq!(
            r(Call::Time, None, &static_exe(true), &h),
            Reason::DirectSyscall
        );
        assert_eq!(
            r(Call::Time, None, &Facts::default(), &h),
            Reason::ExitedUnchecked
        );
    }
}
