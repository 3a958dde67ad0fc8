//! The C benchmark (bench/run.sh, bench.c): it builds from this test build's libraries, each
//! named column is bound to the object it claims (glibc's names to libc.so.6 despite the
//! preload, the program's own names to the preload), and it prints both tables with every row
//! and well-formed ratio cells. No timing is asserted.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use support::skip::skip;
use support::{build_dir, run, scratch};

const ROWS: [&str; 20] = [
    "clock_gettime(REALTIME)",
    "clock_gettime(MONOTONIC)",
    "clock_gettime(PROCESS_CPUTIME_ID)",
    "clock_gettime(THREAD_CPUTIME_ID)",
    "clock_gettime(MONOTONIC_RAW)",
    "clock_gettime(REALTIME_COARSE)",
    "clock_gettime(MONOTONIC_COARSE)",
    "clock_gettime(BOOTTIME)",
    "clock_gettime(REALTIME_ALARM)",
    "clock_gettime(BOOTTIME_ALARM)",
    "clock_gettime(TAI)",
    "clock_gettime(id 12)",
    "clock_gettime(id 16)",
    "clock_getres(MONOTONIC)",
    "clock_getres(MONOTONIC_COARSE)",
    "clock_getres(PROCESS_CPUTIME_ID)",
    "gettimeofday()",
    "time()",
    "getcpu()",
    "sched_getcpu()",
];

/// The cells of the row labelled `label` in the table whose header starts with `header`.
fn row<'a>(out: &'a str, header: &str, label: &str) -> Vec<&'a str> {
    let table = out
        .split_once(header)
        .unwrap_or_else(|| panic!("no table {header:?}:\n{out}"))
        .1;
    let line = table
        .lines()
        .find(|l| l.starts_with(&format!("| {label} ")))
        .unwrap_or_else(|| panic!("no row {label} under {header:?}:\n{out}"));
    line.split('|')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

/// `median [q1-q3]` with q1 <= median <= q3.
fn well_formed(cell: &str) -> bool {
    let parse = |s: &str| s.parse::<f64>().ok();
    let Some((med, range)) = cell.split_once(" [") else {
        return false;
    };
    let Some((q1, q3)) = range.trim_end_matches(']').split_once('-') else {
        return false;
    };
    matches!((parse(q1), parse(med), parse(q3)), (Some(a), Some(m), Some(b)) if a <= m && m <= b)
}

fn run_sh(work: &Path) -> String {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("bench/run.sh");
    let r = run(
        Command::new("sh")
            .arg(script)
            .arg(work)
            .env("FROM", build_dir())
            .env("ROUNDS", "3")
            .env("TRIAL_US", "5")
            .env_remove("LD_PRELOAD"),
        work,
        Duration::from_secs(300),
    );
    assert!(r.status.success(), "run.sh: {}\n{}", r.status, r.stderr);
    r.stdout
}

#[test]
fn c_bench_binds_each_column_and_prints_both_tables() {
    const TEST: &str = "c_bench_binds_each_column_and_prints_both_tables";
    if cfg!(not(all(target_env = "gnu", target_pointer_width = "64"))) {
        return skip(
            TEST,
            "glibc64",
            "the C benchmark is for 64-bit glibc targets",
        );
    }
    let work = scratch("c-bench");
    let out = run_sh(&work);
    assert!(
        out.contains(
            "named calls bound to: glibc -> libc.so.6, libvdsotime -> libvdsotime.so.0, preload -> libvdsotime_preload.so"
        ),
        "{out}"
    );
    assert!(out.contains("interleaved: 3 rounds"), "{out}");
    let ns_header = "| function ";
    let ratio_header = "median [q1-q3] over 3 rounds:";
    let has_vdso = row(&out, ns_header, "clock_gettime(MONOTONIC)")[1] != "-";
    for label in ROWS {
        let ns = row(&out, ns_header, label);
        assert_eq!(
            ns.len(),
            6,
            "{label}: function, raw, glibc, libvdsotime, preload, syscall"
        );
        // Every library column and the syscall exist on every row.
        assert!(ns[2..].iter().all(|c| c.parse::<f64>().is_ok()), "{ns:?}");
        let ratios = row(&out, ratio_header, label);
        assert_eq!(ratios.len(), 5, "{ratios:?}");
        // A ratio wherever the row has the raw vDSO symbol to divide by.
        if ns[1] == "-" {
            assert!(ratios[1..].iter().all(|&c| c == "-"), "{label}: {ratios:?}");
        } else {
            assert!(
                ratios[1..].iter().all(|c| well_formed(c)),
                "{label}: {ratios:?}"
            );
        }
    }
    if !has_vdso {
        skip(
            TEST,
            "vdso",
            "no vDSO clock_gettime in this process: no ratio cells",
        );
    }

    // Without the preload the program says so and drops the preload column.
    let plain = run(
        Command::new(work.join("bench"))
            .args(["-r", "1", "-t", "5", "-g"])
            .arg(work.join("bench_glibc.so"))
            .env_remove("LD_PRELOAD"),
        &work,
        Duration::from_secs(120),
    );
    assert!(plain.status.success(), "{}", plain.stderr);
    assert!(
        plain.stderr.contains("no preload column"),
        "{}",
        plain.stderr
    );
    assert!(plain
        .stdout
        .contains("preload -> - (not run under the preload)"));
    assert_eq!(row(&plain.stdout, ns_header, "time()")[4], "-");
}
