//! Real programs under LD_PRELOAD: `date`, `python3`, `perl` must print what they print without
//! the preload (bracketed: run without, with, without), `LD_DEBUG=bindings` must show their
//! clock symbols bound to the preload, children must inherit it, and
//! `VDSOTIME_PRELOAD_DEBUG` must report the bindings and paths: one line per process, the
//! full table with `all`, appended to a file with `file:PATH`.
//!
//! 64-bit targets only: the machine's programs are 64-bit, and a 32-bit preload built with
//! `--target i686-unknown-linux-gnu` cannot load into them.
#![cfg(target_pointer_width = "64")]

mod support;

use std::collections::BTreeSet;

use support::{preload, run_plain, run_preloaded, scratch};
use vdsotime::{ClockId, Function};

/// Parses one number per line.
fn numbers(out: &str) -> Vec<f64> {
    out.lines()
        .map(|l| {
            l.trim()
                .parse::<f64>()
                .unwrap_or_else(|_| panic!("not a number: {l:?}"))
        })
        .collect()
}

/// Runs a program without, with, and again without the preload; each printed number of the
/// preloaded run must lie within the two plain runs' values.
fn bracket(name: &str, program: &str, args: &[&str]) -> (String, String, String) {
    let dir = scratch(name);
    let before = run_plain(&dir, program, args);
    let with = run_preloaded(&dir, program, args, &[]);
    let after = run_plain(&dir, program, args);
    assert!(
        with.stderr.is_empty(),
        "the preload printed without being asked: {}",
        with.stderr
    );
    (before, with.stdout, after)
}

fn assert_within(name: &str, before: &[f64], with: &[f64], after: &[f64]) {
    assert!(!with.is_empty() && with.len() == before.len() && with.len() == after.len());
    for (i, ((b, w), a)) in before.iter().zip(with).zip(after).enumerate() {
        assert!(
            b <= w && w <= a,
            "{name} value {i}: {w} not within [{b}, {a}]"
        );
    }
}

/// `LD_DEBUG=bindings` output of one preloaded run.
fn bindings(name: &str, program: &str, args: &[&str]) -> String {
    let dir = scratch(&format!("{name}-bindings"));
    run_preloaded(&dir, program, args, &[("LD_DEBUG", "bindings")]).stderr
}

/// Whether the dynamic linker bound `symbol`, referenced from a file whose name contains
/// `from`, to the preload library.
fn bound_to_preload(ld_debug: &str, from: &str, symbol: &str) -> bool {
    let target = format!("to {} [0]: normal symbol `{symbol}'", preload().display());
    ld_debug.lines().any(|l| {
        l.contains(&target)
            && l.split("binding file ")
                .nth(1)
                .is_some_and(|rest| rest.split(" [").next().is_some_and(|f| f.contains(from)))
    })
}

#[test]
fn date_prints_the_same_seconds() {
    let (b, w, a) = bracket("date", "date", &["+%s"]);
    assert_within("date +%s", &numbers(&b), &numbers(&w), &numbers(&a));
    let ld = bindings("date", "date", &["+%s"]);
    assert!(
        bound_to_preload(&ld, "date", "clock_gettime"),
        "date's clock_gettime not bound to the preload:\n{ld}"
    );
}

const PYTHON: &str = "import time
print(repr(time.time()))
print(time.time_ns())
print(time.monotonic_ns())
print(time.clock_gettime_ns(time.CLOCK_BOOTTIME))
print(time.clock_gettime_ns(time.CLOCK_TAI))
for c in (time.CLOCK_REALTIME, time.CLOCK_MONOTONIC, 6, time.CLOCK_BOOTTIME, time.CLOCK_TAI):  # 6: MONOTONIC_COARSE
    print(repr(time.clock_getres(c)))";

#[test]
fn python_clocks_agree() {
    let (b, w, a) = bracket("python", "python3", &["-c", PYTHON]);
    let (b, w, a) = (numbers(&b), numbers(&w), numbers(&a));
    assert_eq!(w.len(), 10, "{w:?}");
    // time.time(), time_ns, monotonic_ns, BOOTTIME, TAI: bracketed; the resolutions: equal.
    assert_within("python3 clocks", &b[..5], &w[..5], &a[..5]);
    assert_eq!(w[5..], b[5..], "clock_getres under the preload");
    assert_eq!(w[5..], a[5..], "clock_getres under the preload");
    let ld = bindings("python", "python3", &["-c", PYTHON]);
    assert!(
        bound_to_preload(&ld, "python", "clock_gettime"),
        "python's clock_gettime not bound to the preload"
    );
    assert!(
        bound_to_preload(&ld, "python", "clock_getres"),
        "python's clock_getres not bound to the preload"
    );
}

/// Python's `os.urandom` calls libc's `getrandom`: bound to the preload (the number of
/// system calls it then makes is counted in preload_random.rs).
#[test]
fn python_getrandom_is_bound_to_the_preload() {
    let program = ["-c", "import os; print(len(os.urandom(16)))"];
    let with = run_preloaded(&scratch("python-urandom"), "python3", &program, &[]);
    assert_eq!(with.stdout.trim(), "16");
    let ld = bindings("python-urandom", "python3", &program);
    assert!(
        bound_to_preload(&ld, "python", "getrandom"),
        "python's getrandom not bound to the preload"
    );
}

/// OpenSSL 3 seeds its generator through `getentropy` where libc has it.
#[test]
fn openssl_seeds_through_the_preloads_getentropy() {
    let program = ["rand", "-hex", "16"];
    if let Err(support::process::Error::Spawn(_)) = support::process::run(
        std::process::Command::new("openssl").arg("version"),
        std::time::Duration::from_secs(60),
    ) {
        return support::skip::skip(
            "openssl_seeds_through_the_preloads_getentropy",
            "openssl",
            "no openssl here",
        );
    }
    let with = run_preloaded(&scratch("openssl"), "openssl", &program, &[]);
    let hex = with.stdout.trim();
    assert!(
        hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
        "{hex:?}"
    );
    let ld = bindings("openssl", "openssl", &program);
    assert!(
        bound_to_preload(&ld, "libcrypto", "getentropy"),
        "libcrypto's getentropy not bound to the preload"
    );
}

#[test]
fn perl_time_agrees() {
    let program = ["-e", "print time, qq(\\n)"];
    let (b, w, a) = bracket("perl", "perl", &program);
    assert_within("perl time", &numbers(&b), &numbers(&w), &numbers(&a));
    let ld = bindings("perl", "perl", &program);
    assert!(
        bound_to_preload(&ld, "perl", "time"),
        "perl's time not bound to the preload"
    );
}

/// The pids of the processes that printed a debug report.
fn reporting_pids(stderr: &str) -> BTreeSet<String> {
    stderr
        .lines()
        .filter_map(|l| {
            l.strip_prefix("vdsotime-preload[")?
                .split_once(']')
                .map(|(pid, _)| pid.to_string())
        })
        .collect()
}

#[test]
fn debug_report_and_children_inherit() {
    let dir = scratch("debug");
    let r = run_preloaded(
        &dir,
        "sh",
        &["-c", "date +%s; exit 0"],
        &[("VDSOTIME_PRELOAD_DEBUG", "all")],
    );
    assert!(
        r.stdout.trim().parse::<u64>().is_ok(),
        "date under sh printed {:?}",
        r.stdout
    );
    assert_eq!(
        reporting_pids(&r.stderr).len(),
        2,
        "expected reports from sh and date:\n{}",
        r.stderr
    );
    for symbol in [
        "clock_gettime",
        "clock_getres",
        "gettimeofday",
        "time",
        "sched_getcpu",
        "getcpu",
    ] {
        let needle = format!("]: {symbol}: bound here");
        assert_eq!(
            r.stderr.matches(&needle).count(),
            2,
            "{symbol} not bound in both processes:\n{}",
            r.stderr
        );
    }
    // The paths reported are the ones the library takes (the same in this process).
    for clock in [
        ClockId::REALTIME,
        ClockId::MONOTONIC,
        ClockId::PROCESS_CPUTIME_ID,
    ] {
        let name = clock.name().expect("named clock");
        let gettime = format!(" {name}={}", vdsotime::path(Function::ClockGettime(clock)));
        assert!(
            r.stderr.contains(&gettime),
            "missing {gettime:?} in\n{}",
            r.stderr
        );
    }
    assert!(
        r.stderr
            .contains(&format!("]: time: {}", vdsotime::path(Function::Time))),
        "{}",
        r.stderr
    );

    assert!(
        r.stderr.contains("]: sched_getcpu: glibc's rseq area"),
        "{}",
        r.stderr
    );
    let no_rseq = run_preloaded(
        &dir,
        "date",
        &["+%s"],
        &[
            ("VDSOTIME_PRELOAD_DEBUG", "all"),
            ("GLIBC_TUNABLES", "glibc.pthread.rseq=0"),
        ],
    );
    // Without the rseq area: the vDSO's getcpu where it has one (this process's path says
    // "rseq area", as this process has one).
    let table = vdsotime::arch::NATIVE;
    let getcpu = match (vdsotime::vdso(), table.getcpu) {
        (Some(_), Some(symbol)) => format!("{symbol}@{}", table.version),
        _ => "syscall".to_string(),
    };
    assert!(
        no_rseq
            .stderr
            .contains(&format!("]: sched_getcpu: {getcpu}")),
        "{}",
        no_rseq.stderr
    );

    let quiet = run_preloaded(&dir, "date", &["+%s"], &[("VDSOTIME_PRELOAD_DEBUG", "0")]);
    assert!(
        quiet.stderr.is_empty(),
        "VDSOTIME_PRELOAD_DEBUG=0 printed: {}",
        quiet.stderr
    );
}

/// The names this target's preload exports (`src/exports.rs`): the table of `all` has one
/// line each.
fn exported_names(table: &str) -> usize {
    table.matches(": bound here (").count() + table.matches(": NOT bound here (").count()
}

#[test]
fn debug_default_is_one_line_per_process() {
    let dir = scratch("debug-line");
    let r = run_preloaded(
        &dir,
        "sh",
        &["-c", "date +%s; exit 0"],
        &[("VDSOTIME_PRELOAD_DEBUG", "1")],
    );
    assert!(r.stdout.trim().parse::<u64>().is_ok(), "{:?}", r.stdout);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(
        lines.len(),
        2,
        "one line each from sh and date:\n{}",
        r.stderr
    );
    assert_eq!(reporting_pids(&r.stderr).len(), 2, "{}", r.stderr);
    let table = run_preloaded(&dir, "true", &[], &[("VDSOTIME_PRELOAD_DEBUG", "all")]).stderr;
    let names = exported_names(&table);
    assert!(names >= 8, "{table}");
    let monotonic = vdsotime::path(Function::ClockGettime(ClockId::MONOTONIC));
    let library = preload();
    for (line, program) in lines.iter().zip(["sh", "date"]) {
        // The program, by its executable's path (sh may be a link to dash).
        let exe = line.split("]: ").nth(1).and_then(|l| l.split(':').next());
        let exe = exe.unwrap_or_else(|| panic!("no program in {line:?}"));
        assert!(exe.starts_with('/'), "{line}");
        if program == "date" {
            assert!(exe.ends_with("/date"), "{line}");
        }
        for needle in [
            format!(": {names} of {names} names bound here;"),
            format!("clock_gettime CLOCK_MONOTONIC: {monotonic};"),
            format!("loaded from {}", library.display()),
            "VDSOTIME_PRELOAD_DEBUG=all".to_string(),
        ] {
            assert!(line.contains(&needle), "{needle:?} not in {line:?}");
        }
    }
}

#[test]
fn debug_appends_to_a_file_and_says_when_it_cannot() {
    let dir = scratch("debug-file");
    let log = dir.join("preload.log");
    std::fs::write(&log, "kept\n").expect("write");
    let file = format!("file:{}", log.display());
    let r = run_preloaded(
        &dir,
        "sh",
        &["-c", "date +%s; exit 0"],
        &[("VDSOTIME_PRELOAD_DEBUG", &file)],
    );
    assert!(r.stderr.is_empty(), "reported on stderr too: {}", r.stderr);
    let text = std::fs::read_to_string(&log).expect("read");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.first(), Some(&"kept"), "not appended:\n{text}");
    assert_eq!(lines.len(), 3, "one line each from sh and date:\n{text}");
    assert_eq!(reporting_pids(&text).len(), 2, "{text}");
    // all,file:PATH appends the table, and the report's descriptor is not left open in the
    // program: `ls`, itself preloaded, lists its own descriptors.
    let all = format!("all,{file}");
    let r = run_preloaded(
        &dir,
        "sh",
        &["-c", "ls -l /proc/self/fd/"],
        &[("VDSOTIME_PRELOAD_DEBUG", &all)],
    );
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    assert!(
        !r.stdout.contains(log.to_str().expect("utf-8")),
        "the report's descriptor was left open:\n{}",
        r.stdout
    );
    let text = std::fs::read_to_string(&log).expect("read");
    assert!(
        text.starts_with(&format!("kept\n{}", lines[1..].join("\n"))),
        "{text}"
    );
    let table = &text[text.find("loaded from").expect("the table")..];
    assert!(
        exported_names(table) >= 16,
        "both processes' tables:\n{text}"
    );
    // A file that cannot be opened: the reason and the report on stderr, the program runs.
    let missing = format!("file:{}", dir.join("no-such-dir/log").display());
    let r = run_preloaded(
        &dir,
        "date",
        &["+%s"],
        &[("VDSOTIME_PRELOAD_DEBUG", &missing)],
    );
    assert!(r.stdout.trim().parse::<u64>().is_ok(), "{:?}", r.stdout);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", r.stderr);
    assert!(
        lines[0].contains("cannot open")
            && lines[0].contains("no-such-dir/log")
            && lines[0].contains("errno 2"),
        "{}",
        r.stderr
    );
    assert!(lines[1].contains("names bound here"), "{}", r.stderr);
}
