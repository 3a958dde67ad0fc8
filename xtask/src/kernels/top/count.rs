//! `vdsotime top` counting exactly inside each machine's default boot, once per backend the
//! machine's tool has: the init's `vm-top-count` (xtask/vm-init/src/count.rs) starts
//! `top --once --format json --backend B`, and once `top` holds that backend a process
//! makes exactly [`CALLS`] direct `clock_gettime(CLOCK_MONOTONIC)` system calls and exits,
//! long before `top`'s interval ends. The judge wants that process listed with exactly
//! that many calls of that clock, by that backend, none lost: perf's `perf_event_attr`
//! flags and byte-sized ring buffers on big-endian s390x and 64 KiB-page ppc64le, the BPF
//! objects of either byte order, every architecture's system call numbering.

use super::super::json::{self, Value};
use super::super::machines::Machine;

/// The calls the counted process makes.
pub const CALLS: u64 = 2000;

/// Each run's timeout (s): `top` first measures what the calls cost, slow under TCG.
const TIMEOUT: u64 = 240;

/// `top`'s `--duration` in these runs (s): only a bound, since the init ends the
/// interval once the calls are made.
const INTERVAL: &str = "120";

/// The largest perf ring buffer mapping accepted (bytes): the tool sizes each in bytes (2
/// MiB of data and a metadata page); sized in pages, one would be 32 MiB on ppc64le's 64 KiB
/// pages.
const RING_LIMIT: u64 = 4 << 20;

/// The architectures whose tool is a 32-bit build, which has no BPF backend.
const BITS_32: &[&str] = &["i686", "arm"];

/// Where fentry counts, by 64-bit architecture: the first Linux version whose BPF
/// trampolines attach its programs there (x86_64 5.5; aarch64 6.4, with ftrace's direct
/// calls; riscv64 6.4; powerpc64 6.13, the first with trampolines). On an older kernel,
/// and on s390x, `--backend fentry` must be refused with the kernel's reason and `auto`
/// must fall back to the tracepoint, saying why. Debian's s390x kernels refuse fentry
/// in the machine: 6.1's BTF cannot be parsed, and the newest (7.2) refuses to load the
/// programs with ENOMEM, with the machine's 512 MiB and with 2 GiB alike (the verifier's
/// log then holds only its time).
const FENTRY_SINCE: &[(&str, (u32, u32))] = &[
    ("x86_64", (5, 5)),
    ("aarch64", (6, 4)),
    ("riscv64", (6, 4)),
    ("powerpc64le", (6, 13)),
];

/// The backends `machine`'s default boot asks for: `auto`, then each backend its tool has
/// (fentry and the tracepoint on 64-bit builds, perf's ring buffers everywhere); none in a
/// kernel built here from `tinyconfig`, which has no system call tracepoints.
pub fn backends(machine: &Machine) -> &'static [&'static str] {
    if machine.source_config.is_some() {
        &[]
    } else if BITS_32.contains(&machine.arch) {
        &["auto", "perf"]
    } else {
        &["auto", "fentry", "tracepoint", "perf"]
    }
}

/// What a run that asked for a backend must give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// An exact count by this backend (with a reason for not using fentry, if `auto` falls
    /// back).
    Count(&'static str),
    /// `top` refuses, saying why (fentry on a kernel without trampolines for it).
    Refused,
}

/// What asking for `asked` must give on architecture `arch` running kernel `release`
/// (`6.1.0-50-s390x`): the machine's expected backend, written here and shown in its log.
pub fn want(asked: &str, arch: &str, release: &str) -> Want {
    let version = release_version(release);
    let fentry = FENTRY_SINCE
        .iter()
        .any(|&(a, since)| a == arch && version.is_some_and(|v| v >= since));
    match asked {
        "auto" if fentry => Want::Count("fentry"),
        "auto" if BITS_32.contains(&arch) => Want::Count("perf"),
        "auto" => Want::Count("tracepoint"),
        "fentry" if !fentry => Want::Refused,
        "fentry" => Want::Count("fentry"),
        "tracepoint" => Want::Count("tracepoint"),
        _ => Want::Count("perf"),
    }
}

/// `6.12.57+deb13-amd64` → (6, 12).
fn release_version(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// Which process makes the calls: this build's own (`vm-syscalls`, exiting right after
/// its calls), or, on an x86_64 kernel, the i686 build's (`vm-syscalls32`, a 32-bit
/// process making i386's calls, alive until `top` ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    Native,
    I386,
}

/// The build whose program runs as the 32-bit counted process on `machine`'s kernel:
/// i686 on x86_64's Debian kernels (IA-32 emulation).
pub fn compat_triple(machine: &Machine) -> Option<&'static str> {
    (machine.arch == "x86_64" && machine.source_config.is_none())
        .then_some("i686-unknown-linux-musl")
}

/// Where the 32-bit counted program is in the machine.
pub const I386_PROGRAM: &str = "/bin/vm-syscalls32";

/// The plan's label for the count with `backend`.
pub fn label(backend: &str, counted: Counted) -> String {
    match counted {
        Counted::Native => format!("top-count-{backend}"),
        Counted::I386 => format!("top-count32-{backend}"),
    }
}

/// Whether `label` is one of these runs.
pub fn is_label(label: &str) -> bool {
    label.starts_with("top-count")
}

/// Whether the run for `backend` gives `top` a tracefs without syscall tracepoints (as a
/// kernel built with `CONFIG_FTRACE_SYSCALLS=n` has): the BPF counters asked for by name,
/// which attach without tracefs, must count exactly all the same.
pub fn without_tracepoints(backend: &str) -> bool {
    matches!(backend, "fentry" | "tracepoint")
}

/// The line the init prints for such a run.
const WITHOUT_TRACEPOINTS: &str = "tracefs without syscall tracepoints: ";

/// The run for `backend` counting `counted`: label, timeout (s), argv.
pub fn run(backend: &str, counted: Counted) -> (String, u64, Vec<String>) {
    let calls = CALLS.to_string();
    let mut argv = vec!["/bin/vm-top-count"];
    if counted == Counted::I386 {
        argv.extend(["--counted", I386_PROGRAM]);
    }
    if without_tracepoints(backend) {
        argv.push("--without-tracepoints");
    }
    argv.extend([backend, &calls]);
    // `top` as the clocksource boot runs it (after its watcher), with the backend, for an
    // interval no machine outlasts: `vm-top-count` ends it with SIGINT once the calls are
    // made, and `top` then prints what it counted.
    let mut top = super::RUN.2[1..].to_vec();
    if let Some(at) = top.iter().position(|a| *a == "--duration") {
        top[at + 1] = INTERVAL;
    }
    argv.extend(top);
    argv.extend(["--backend", backend]);
    (
        label(backend, counted),
        TIMEOUT,
        argv.iter().map(|a| a.to_string()).collect(),
    )
}

/// Judges the run that asked for `asked`: its output lines and exit code, against what it
/// must give (`want`). `Ok` is the report line; `Err` every reason the run is wrong.
pub fn judge(
    asked: &str,
    want: Want,
    who: Counted,
    lines: &[String],
    exit: Option<i32>,
) -> Result<String, Vec<String>> {
    match want {
        Want::Refused => refused(asked, lines, exit),
        Want::Count(backend) => counted(asked, backend, who, lines, exit),
    }
}

/// A refusal must be an exit other than 0 with `top`'s error (`vdsotime: ...`), which names
/// the backend.
fn refused(asked: &str, lines: &[String], exit: Option<i32>) -> Result<String, Vec<String>> {
    let reason = lines
        .iter()
        .find(|l| l.starts_with("vdsotime: ") && l.contains(asked));
    match (exit, reason) {
        (Some(code), Some(reason)) if code != 0 => Ok(format!(
            "top --backend {asked}: refused as this kernel requires (exit {code}): {reason}"
        )),
        _ => Err(vec![format!(
            "top --backend {asked} should be refused on this kernel, with a reason; it \
             exited {exit:?}: {}",
            lines
                .iter()
                .rev()
                .take(3)
                .rev()
                .cloned()
                .collect::<Vec<_>>()
                .join(" | ")
        )]),
    }
}

/// An exact count by `backend`.
fn counted(
    asked: &str,
    backend: &str,
    who: Counted,
    lines: &[String],
    exit: Option<i32>,
) -> Result<String, Vec<String>> {
    let mut failures = Vec::new();
    if exit != Some(0) {
        failures.push(format!("exit status {exit:?}"));
    }
    let stripped = lines.iter().any(|l| l.starts_with(WITHOUT_TRACEPOINTS));
    if without_tracepoints(asked) && !stripped {
        failures.push(format!(
            "no `{WITHOUT_TRACEPOINTS}...` line: --backend {asked} was not run without them"
        ));
    }
    let counted = lines
        .iter()
        .find_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            ["counted", pid, calls] => Some((pid.parse::<u32>().ok()?, calls.parse::<u64>().ok()?)),
            _ => None,
        });
    let Some((pid, calls)) = counted else {
        failures.push("the counted process did not make its calls".to_string());
        failures.extend(lines.iter().rev().take(3).rev().cloned());
        return Err(failures);
    };
    let rings = if backend == "perf" {
        match ring_sizes(lines) {
            Some((sizes, page)) => {
                if let Some(big) = sizes.iter().find(|&&b| b > RING_LIMIT) {
                    failures.push(format!(
                        "a perf ring buffer of {} KiB (pages of {} KiB): over {} KiB",
                        big / 1024,
                        page / 1024,
                        RING_LIMIT / 1024
                    ));
                }
                format!(
                    "; perf rings of {} KiB, pages of {} KiB",
                    sizes.iter().max().copied().unwrap_or(0) / 1024,
                    page / 1024
                )
            }
            None => {
                failures.push("no line gives perf's ring buffer sizes".to_string());
                String::new()
            }
        }
    } else {
        String::new()
    };
    let doc = match json::document(lines) {
        Ok(d) => d,
        Err(e) => {
            failures.push(format!("top --format json: {e}"));
            return Err(failures);
        }
    };
    if doc.str_at("backend") != backend {
        failures.push(format!(
            "counted with {:?}, not {backend} ({})",
            doc.str_at("backend"),
            doc.str_at("backend_reason")
        ));
    }
    // auto names what it fell back from; a backend asked for by name has no reason.
    let reason = doc.str_at("backend_reason");
    let fell_back = asked == "auto" && backend != "fentry";
    if fell_back && !reason.contains("fentry") {
        failures.push(format!(
            "auto fell back to {backend} without saying why fentry could not count: {reason:?}"
        ));
    }
    let lost = doc
        .get("lost_samples")
        .and_then(Value::as_f64)
        .unwrap_or(-1.0);
    if lost != 0.0 {
        failures.push(format!("{lost} events lost"));
    }
    let rows: Vec<&Value> = doc
        .get("rows")
        .map_or(&[][..], Value::as_array)
        .iter()
        .filter(|r| r.get("pid").and_then(Value::as_f64) == Some(f64::from(pid)))
        .collect();
    let seen: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{} {} x{}",
                r.str_at("syscall"),
                r.str_at("clock"),
                r.get("calls").and_then(Value::as_f64).unwrap_or(-1.0)
            )
        })
        .collect();
    let exact = rows.len() == 1
        && rows[0].str_at("syscall").starts_with("clock_gettime")
        && rows[0].str_at("clock") == "CLOCK_MONOTONIC"
        && rows[0].get("calls").and_then(Value::as_f64) == Some(calls as f64);
    if !exact {
        failures.push(format!(
            "pid {pid} made {calls} clock_gettime CLOCK_MONOTONIC calls; top listed [{}]",
            seen.join(", ")
        ));
    }
    if failures.is_empty() {
        let held = lines
            .iter()
            .find_map(|l| l.strip_prefix("holding "))
            .unwrap_or("?");
        let chose = if asked == "auto" {
            format!(" chose {backend}")
        } else {
            String::new()
        };
        let why = if fell_back {
            format!(" ({reason})")
        } else {
            String::new()
        };
        let tracefs = if stripped {
            ", with a tracefs without syscall tracepoints"
        } else {
            ""
        };
        Ok(format!(
            "top --backend {asked}{chose}{why}{tracefs}: {} {calls} direct calls counted \
             exactly ({}; holding {held}{rings})",
            match who {
                Counted::Native => "a process's",
                Counted::I386 => "a 32-bit (i386) process's",
            },
            seen.join(", ")
        ))
    } else {
        Err(failures)
    }
}

/// `perf rings: N of A, B KiB; page P KiB`: each ring's size and the page size, in bytes.
fn ring_sizes(lines: &[String]) -> Option<(Vec<u64>, u64)> {
    let rest = lines.iter().find_map(|l| l.strip_prefix("perf rings: "))?;
    let (rings, page) = rest.split_once(" KiB; page ")?;
    let (_, sizes) = rings.split_once(" of ")?;
    let sizes = sizes
        .split(", ")
        .map(|k| k.parse::<u64>().ok().map(|k| k * 1024))
        .collect::<Option<Vec<u64>>>()?;
    let page = page.strip_suffix(" KiB")?.parse::<u64>().ok()? * 1024;
    (!sizes.is_empty()).then_some((sizes, page))
}

#[cfg(test)]
mod tests;
