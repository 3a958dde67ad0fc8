//! What watching with `vdsotime top` costs inside an x86_64 machine, where the kernel
//! attaches fentry's programs (a host whose kernel refuses them cannot measure that
//! backend): the `top_overhead` benchmark (crates/vdsotime-cli/benches/top_overhead),
//! built for the machine, run by the init as root with the machine's `/bin/vdsotime`.
//! Under TCG the ratios only indicate; the tables are printed, nothing is asserted on a
//! figure. The boot fails if the benchmark did not run to its tables, if a watcher the
//! kernel must give (fentry where it attaches) got a SKIP row, or if a BPF backend did not
//! count the loop's calls exactly.

use super::count::{self, Want};

/// The plan's label of the run.
pub const LABEL: &str = "top-overhead";

/// Where the benchmark is in the machine.
pub const INSIDE: &str = "/tests/top_overhead";

/// The run's timeout (s): a bound far above what the rounds and the CPU phase take under
/// TCG (docs/top.md gives the boot's time), for a loaded host.
const TIMEOUT: u64 = 1200;

/// The watchers: the A/A row, the floor of any program on `sys_enter`, and each backend.
const WATCHERS: &str = "none,empty-program,top-fentry,top-tracepoint,top-perf";

/// The backends that count in the kernel, whose counts must be exact.
const IN_KERNEL: &[&str] = &["fentry", "tracepoint"];

/// The benchmark's settings: fewer calls per trial than natively, since under TCG a
/// system call costs several times what it costs on the host.
const SETTINGS: &[(&str, &str)] = &[
    ("TOP_OVERHEAD_VDSOTIME", "/bin/vdsotime"),
    ("TOP_OVERHEAD_WATCHERS", WATCHERS),
    ("TOP_OVERHEAD_CALLS", "100000"),
    ("TOP_OVERHEAD_ROUNDS", "5"),
    ("TOP_OVERHEAD_CPU_SECONDS", "3"),
];

/// The run: label, timeout (s), argv (the init's `env` applet sets the settings).
pub fn run() -> (&'static str, u64, Vec<String>) {
    let mut argv = vec!["/bin/env".to_string()];
    argv.extend(SETTINGS.iter().map(|(k, v)| format!("{k}={v}")));
    argv.extend([INSIDE.to_string(), "--bench".to_string()]);
    (LABEL, TIMEOUT, argv)
}

/// The table rows of watcher `name` (`vdsotime top --backend fentry`), one per workload.
fn rows<'a>(lines: &'a [String], name: &str) -> Vec<&'a str> {
    let cell = format!("| {name} |");
    lines
        .iter()
        .filter(|l| l.starts_with(&cell))
        .map(String::as_str)
        .collect()
}

/// Judges the run on a kernel `release` of `arch`: `Ok` is what the report shows (the
/// machine's line and both tables), `Err` every reason the run is wrong.
pub fn judge(
    lines: &[String],
    exit: Option<i32>,
    arch: &str,
    release: &str,
) -> Result<Vec<String>, Vec<String>> {
    let mut wrong = Vec::new();
    if exit != Some(0) {
        wrong.push(format!("top_overhead exited {exit:?}"));
    }
    let start = lines.iter().position(|l| l.starts_with("CPU: "));
    let Some(start) = start else {
        wrong.push("top_overhead printed no tables".to_string());
        return Err(wrong);
    };
    let shown: Vec<String> = lines[start..]
        .iter()
        .filter(|l| !l.starts_with("round "))
        .cloned()
        .collect();
    for key in WATCHERS.split(',') {
        let name = match key.strip_prefix("top-") {
            Some(backend) => format!("vdsotime top --backend {backend}"),
            None if key == "none" => "none (A/A)".to_string(),
            None => "an empty BPF program on the raw tracepoint sys_enter".to_string(),
        };
        let found = rows(&shown, &name);
        if found.len() != 2 {
            wrong.push(format!("{name}: {} table rows, not 2", found.len()));
            continue;
        }
        let backend = key.strip_prefix("top-");
        let expected = backend.is_some_and(|b| count::want(b, arch, release) != Want::Refused);
        if found.iter().any(|r| r.contains("SKIP")) && (expected || backend.is_none()) {
            wrong.push(format!("{name} skipped: {}", found[0]));
        }
        // The watched loop's row (the first table) says what the backend counted.
        let in_kernel = backend.is_some_and(|b| IN_KERNEL.contains(&b));
        if in_kernel && expected && !found[0].contains(": exact") {
            wrong.push(format!("{name} did not count exactly: {}", found[0]));
        }
    }
    if wrong.is_empty() {
        Ok(shown)
    } else {
        Err(wrong)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(fentry: &str, tracepoint: &str) -> Vec<String> {
        let text = format!(
            "round 1/5 done, 40 s\n\
             CPU: QEMU Virtual CPU (2 online); kernel 6.12.0; load 1.0 to 2.0; 300 s\n\
             ### The watched loop\n\
             | watcher | fastest ns/call | median ratio | notes |\n\
             | none (A/A) | 900.0 | 1.00x |  |\n\
             | an empty BPF program on the raw tracepoint sys_enter | 950.0 | 1.05x |  |\n\
             | vdsotime top --backend fentry | {fentry} |\n\
             | vdsotime top --backend tracepoint | {tracepoint} |\n\
             | vdsotime top --backend perf | 1900.0 | 2.10x | counted 9 of 10 |\n\
             ### Other system calls\n\
             | none (A/A) | 800.0 | 1.00x |  |\n\
             | an empty BPF program on the raw tracepoint sys_enter | 850.0 | 1.06x |  |\n\
             | vdsotime top --backend fentry | 801.0 | 1.01x |  |\n\
             | vdsotime top --backend tracepoint | 880.0 | 1.10x |  |\n\
             | vdsotime top --backend perf | 900.0 | 1.12x |  |\n"
        );
        text.lines().map(str::to_string).collect()
    }

    const EXACT: &str = "1000.0 | 1.10x | counted 10 of 10: exact";

    #[test]
    fn the_tables_are_shown_and_the_bpf_backends_must_count_exactly() {
        let run = run();
        assert_eq!(run.0, LABEL);
        assert_eq!(run.2[0], "/bin/env");
        assert_eq!(run.2[run.2.len() - 2..], [INSIDE, "--bench"]);
        let release = "6.12.57+deb13-amd64";
        let shown = judge(&output(EXACT, EXACT), Some(0), "x86_64", release).unwrap();
        assert!(shown[0].starts_with("CPU: "));
        assert!(shown.iter().all(|l| !l.starts_with("round ")));
        assert_eq!(shown.len(), 14);
        // A perf count short of the calls is shown, not judged.
        assert!(shown.iter().any(|l| l.contains("counted 9 of 10 |")));

        let short = "1000.0 | 1.10x | counted 9 of 10";
        let err = judge(&output(EXACT, short), Some(0), "x86_64", release).unwrap_err();
        assert_eq!(err.len(), 1, "{err:?}");
        assert!(err[0].contains("tracepoint did not count exactly"));
        let skip = "- | - | SKIP: refused";
        let err = judge(&output(skip, EXACT), Some(0), "x86_64", release).unwrap_err();
        assert!(err.iter().any(|e| e.contains("fentry skipped")), "{err:?}");
        // Where the kernel cannot attach fentry, its SKIP is expected.
        assert!(judge(&output(skip, EXACT), Some(0), "x86_64", "5.4.0").is_ok());
        assert!(judge(&output(EXACT, EXACT), Some(1), "x86_64", release).is_err());
        let none: Vec<String> = vec!["round 1/5 done".into()];
        assert!(judge(&none, Some(0), "x86_64", release).is_err());
    }
}
