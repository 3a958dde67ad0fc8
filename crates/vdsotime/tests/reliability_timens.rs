//! Time namespaces: MONOTONIC and BOOTTIME carry per-namespace offsets that only the
//! kernel's own vDSO code and the syscall apply (vdso-facts trap 7). A child re-executed
//! under `unshare --time --fork --monotonic 86400 --boottime 172800` checks every clock
//! through the library against the raw syscall; the parent checks the offsets from outside.

mod reliability_common;

use std::process::Command;
use std::time::Duration;

use reliability_common::{bracket, bracket_time, child_mode, ns, process, run_child, skip::skip};
use vdsotime::{ClockId, Function, Path};

const TEST: &str = "clocks_inside_a_time_namespace";
const MONO_OFFSET_S: i64 = 86_400;
const BOOT_OFFSET_S: i64 = 172_800;

fn sys_ns(clock: ClockId) -> i128 {
    ns(vdsotime::syscall::clock_gettime(clock).expect("syscall clock_gettime"))
}

#[test]
fn clocks_inside_a_time_namespace() {
    if child_mode().as_deref() == Some("timens") {
        inside();
        return;
    }
    let probe = match process::run(
        Command::new("unshare").args(["--time", "--fork", "--monotonic", "1", "true"]),
        Duration::from_secs(60),
    ) {
        Ok(probe) => probe,
        Err(process::Error::Spawn(e)) => {
            return skip(TEST, "timens", format_args!("cannot run unshare: {e}"))
        }
        Err(hung) => panic!("{hung}"),
    };
    if !probe.status.success() {
        let err = String::from_utf8_lossy(&probe.stderr);
        if err.contains("Operation not permitted") || err.contains("Invalid argument") {
            return skip(
                TEST,
                "timens",
                format_args!(
                    "this kernel or sandbox refuses time namespaces: {}",
                    err.trim()
                ),
            );
        }
        panic!("unshare --time failed: {probe:?}");
    }

    let clocks = [ClockId::MONOTONIC, ClockId::BOOTTIME, ClockId::REALTIME];
    let before: Vec<i128> = clocks.iter().map(|&c| sys_ns(c)).collect();
    let run = run_child(
        TEST,
        "timens",
        &[
            "unshare",
            "--time",
            "--fork",
            "--monotonic",
            &MONO_OFFSET_S.to_string(),
            "--boottime",
            &BOOT_OFFSET_S.to_string(),
        ],
        Duration::from_secs(60),
    );
    let after: Vec<i128> = clocks.iter().map(|&c| sys_ns(c)).collect();
    assert!(
        run.status.success(),
        "child in the time namespace failed: {run:#?}"
    );
    assert_eq!(
        run.values("TIMENS_OK").len(),
        1,
        "child did not finish: {run:#?}"
    );

    let offsets = [MONO_OFFSET_S, BOOT_OFFSET_S, 0];
    for (i, (clock, off)) in clocks.iter().zip(offsets).enumerate() {
        let key = format!("INSIDE {}=", clock.name().unwrap());
        let inside: i128 = run.values(&key)[0].parse().expect("child value");
        let shifted = inside - i128::from(off) * 1_000_000_000;
        assert!(
            before[i] <= shifted && shifted <= after[i],
            "{key}{inside} minus {off} s is not within the outside readings [{}, {}]",
            before[i],
            after[i]
        );
        println!("{clock:?}: inside - outside = {off} s (bracketed)");
    }
}

/// Runs in the namespace: every clock through the library against the syscall there.
fn inside() {
    let offsets = std::fs::read_to_string("/proc/self/timens_offsets").expect("timens_offsets");
    println!("timens_offsets: {}", offsets.replace('\n', "; "));
    let fields: Vec<Vec<&str>> = offsets
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    for want in [
        ["monotonic", &MONO_OFFSET_S.to_string(), "0"],
        ["boottime", &BOOT_OFFSET_S.to_string(), "0"],
    ] {
        assert!(
            fields.iter().any(|f| f[..] == want[..]),
            "{want:?} not in {offsets}"
        );
    }

    let mut failures = Vec::new();
    for _ in 0..200 {
        for clock in ClockId::ALL {
            if let Err(e) = bracket(clock) {
                failures.push(e);
            }
        }
        let b = vdsotime::syscall::gettimeofday().expect("syscall gettimeofday");
        let v = vdsotime::gettimeofday().expect("gettimeofday");
        let a = vdsotime::syscall::gettimeofday().expect("syscall gettimeofday");
        if !(b <= v && v <= a) {
            failures.push(format!("gettimeofday {v:?} outside [{b:?}, {a:?}]"));
        }
        if let Err(e) = bracket_time() {
            failures.push(e);
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches, first: {:?}",
        failures.len(),
        &failures[..3.min(failures.len())]
    );

    // The vDSO itself (not a syscall) must be what serves MONOTONIC here, offsets included.
    let path = vdsotime::path(Function::ClockGettime(ClockId::MONOTONIC));
    println!("MONOTONIC served by {path}");
    if vdsotime::vdso().is_none() {
        skip(
            TEST,
            "vdso",
            "no vDSO: the namespace was checked through the syscall path only",
        );
    } else {
        assert!(
            matches!(path, Path::Vdso { .. }),
            "MONOTONIC not from the vDSO: {path}"
        );
        if let Some(f) = vdsotime::raw::clock_gettime() {
            let mut ts = vdsotime::Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            let b = sys_ns(ClockId::MONOTONIC);
            // SAFETY: the library resolved this vDSO entry point; it writes one timespec.
            let r = unsafe { f(ClockId::MONOTONIC.as_raw(), &mut ts) };
            let a = sys_ns(ClockId::MONOTONIC);
            assert_eq!(r, 0, "raw vDSO clock_gettime failed");
            assert!(
                b <= ns(ts) && ns(ts) <= a,
                "raw vDSO MONOTONIC lacks the namespace offset"
            );
        }
    }
    for clock in [ClockId::MONOTONIC, ClockId::BOOTTIME, ClockId::REALTIME] {
        let v = vdsotime::clock_gettime(clock).expect("clock_gettime");
        println!("INSIDE {}={}", clock.name().unwrap(), ns(v));
    }
    println!("TIMENS_OK");
}
