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

/// The largest perf ring buffer mapping accepted (bytes): the tool sizes each in bytes (2
/// MiB of data and a metadata page); sized in pages, one would be 32 MiB on ppc64le's 64 KiB
/// pages.
const RING_LIMIT: u64 = 4 << 20;

/// The architectures whose tool is a 32-bit build, which has no BPF backend.
const BITS_32: &[&str] = &["i686", "arm"];

/// The backends `machine`'s default boot counts with: BPF's counter where the tool has it
/// (64-bit builds) and perf's ring buffers everywhere; none in a kernel built here from
/// `tinyconfig`, which has no system call tracepoints.
pub fn backends(machine: &Machine) -> &'static [&'static str] {
    if machine.source_config.is_some() {
        &[]
    } else if BITS_32.contains(&machine.arch) {
        &["perf"]
    } else {
        &["tracepoint", "perf"]
    }
}

/// The plan's label for the count with `backend`.
pub fn label(backend: &str) -> String {
    format!("top-count-{backend}")
}

/// Whether `label` is one of these runs.
pub fn is_label(label: &str) -> bool {
    label.starts_with("top-count-")
}

/// The run for `backend`: label, timeout (s), argv.
pub fn run(backend: &str) -> (String, u64, Vec<String>) {
    let calls = CALLS.to_string();
    let argv = [
        "/bin/vm-top-count",
        backend,
        &calls,
        "/bin/vdsotime",
        "top",
        "--once",
        "--duration",
        "5",
        "--format",
        "json",
        "--backend",
        backend,
    ];
    (
        label(backend),
        TIMEOUT,
        argv.iter().map(|a| a.to_string()).collect(),
    )
}

/// Judges the count with `backend`: the run's output lines and exit code. `Ok` is the
/// report line; `Err` every reason the count is wrong.
pub fn judge(backend: &str, lines: &[String], exit: Option<i32>) -> Result<String, Vec<String>> {
    let mut failures = Vec::new();
    if exit != Some(0) {
        failures.push(format!("exit status {exit:?}"));
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
        Ok(format!(
            "top --backend {backend}: a process's {calls} direct calls counted exactly ({}; \
             holding {held}{rings})",
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
mod tests {
    use super::*;

    fn output(backend: &str, rows: &str, lost: u32) -> Vec<String> {
        let mut lines = vec![
            format!("holding {backend} after 2.0 s"),
            "perf rings: 2 of 2112, 2112 KiB; page 64 KiB".to_string(),
            "counted 77 2000".to_string(),
        ];
        let doc = format!(
            r#"{{"backend": "{backend}", "backend_reason": null, "lost_samples": {lost},
            "rows": [{rows}]}}"#
        );
        lines.extend(doc.lines().map(str::to_string));
        lines
    }

    fn row(pid: u32, clock: &str, calls: u64) -> String {
        format!(
            r#"{{"pid": {pid}, "comm": "vm-syscalls", "syscall": "clock_gettime",
            "clock": "{clock}", "calls": {calls}}}"#
        )
    }

    #[test]
    fn an_exact_count_passes_and_says_so() {
        let lines = output(
            "perf",
            &format!(
                "{},{}",
                row(77, "CLOCK_MONOTONIC", 2000),
                row(1, "CLOCK_REALTIME", 5)
            ),
            0,
        );
        let said = judge("perf", &lines, Some(0)).expect("exact");
        assert!(said.contains("2000 direct calls counted exactly"), "{said}");
    }

    #[test]
    fn one_call_missing_or_extra_fails() {
        for calls in [1999, 2001] {
            let lines = output("perf", &row(77, "CLOCK_MONOTONIC", calls), 0);
            let wrong = judge("perf", &lines, Some(0)).expect_err("inexact");
            assert!(wrong[0].contains(&format!("x{calls}")), "{wrong:?}");
        }
    }

    #[test]
    fn the_wrong_clock_backend_losses_or_exit_fail() {
        let lines = output("perf", &row(77, "CLOCK_REALTIME", 2000), 0);
        assert!(judge("perf", &lines, Some(0)).is_err());
        let lines = output("perf", &row(77, "CLOCK_MONOTONIC", 2000), 0);
        assert!(judge("tracepoint", &lines, Some(0)).is_err());
        assert!(judge("perf", &lines, Some(1)).is_err());
        let lines = output("perf", &row(77, "CLOCK_MONOTONIC", 2000), 3);
        assert!(judge("perf", &lines, Some(0)).is_err());
    }

    #[test]
    fn perf_rings_sized_in_pages_fail() {
        let mut lines = output("perf", &row(77, "CLOCK_MONOTONIC", 2000), 0);
        let said = judge("perf", &lines, Some(0)).expect("rings of 2 MiB");
        assert!(
            said.contains("perf rings of 2112 KiB, pages of 64 KiB"),
            "{said}"
        );
        lines[1] = "perf rings: 2 of 32832, 32832 KiB; page 64 KiB".to_string();
        let wrong = judge("perf", &lines, Some(0)).expect_err("rings of 32 MiB");
        assert!(wrong[0].contains("32832 KiB"), "{wrong:?}");
        lines.remove(1);
        assert!(judge("perf", &lines, Some(0)).is_err());
    }

    #[test]
    fn no_count_or_no_document_fails() {
        let lines = vec!["vm-top-count: /bin/vdsotime exited".to_string()];
        assert!(judge("perf", &lines, Some(1)).is_err());
        let lines = vec!["counted 77 2000".to_string()];
        assert!(judge("perf", &lines, Some(0)).is_err());
    }

    #[test]
    fn the_help_states_the_count() {
        let help = super::super::super::USAGE.replace('\n', " ");
        assert!(help.contains(&format!("exactly {CALLS} direct")), "{help}");
    }

    #[test]
    fn thirty_two_bit_tools_and_the_tinyconfig_kernel_count_with_what_they_have() {
        for m in super::super::super::machines::ALL {
            let b = backends(m);
            assert!(
                m.source_config.is_some() || b.contains(&"perf"),
                "{}",
                m.name
            );
            assert_eq!(
                b.contains(&"tracepoint"),
                m.source_config.is_none() && !BITS_32.contains(&m.arch),
                "{}",
                m.name
            );
        }
    }
}
