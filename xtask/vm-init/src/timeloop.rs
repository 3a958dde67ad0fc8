//! The time-reading processes `vdsotime top` is judged against inside a machine.
//!
//! - `vm-timeloop CLOCK HZ SECS`: reads `CLOCK` (`monotonic` or `realtime`) through the C
//!   library's `clock_gettime`, `HZ` times a second, for at most `SECS` seconds: a program
//!   that reads the time the ordinary way, which the vDSO serves where it can read the
//!   clocksource and which enters the kernel where it cannot.
//! - `vm-top-watch PROGRAM ARGS...`: starts one `vm-timeloop` per clock in [`LOOPS`],
//!   prints `loop PID CLOCK_NAME HZ` for each, runs PROGRAM (`vdsotime top`) with this
//!   output, then ends the loops and exits with PROGRAM's status. The loops run before,
//!   through and after PROGRAM's whole window.

use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// The loops `vm-top-watch` starts: the `vm-timeloop` clock argument, the name `top`
/// gives that clock, and the calls per second.
pub const LOOPS: &[(&str, &str, u32)] = &[
    ("monotonic", "CLOCK_MONOTONIC", 200),
    ("realtime", "CLOCK_REALTIME", 50),
];

/// Where the loop program is (a link to this program, so its command name is its own).
const LOOP_PROGRAM: &str = "/bin/vm-timeloop";
/// How long a loop may live if nobody ends it.
const LOOP_LIMIT_SECS: &str = "900";

/// `vm-timeloop CLOCK HZ SECS`.
pub fn timeloop(args: &[String]) -> i32 {
    let usage = || {
        eprintln!("usage: vm-timeloop monotonic|realtime HZ SECS");
        2
    };
    let [clock, hz, secs] = args else {
        return usage();
    };
    let clock = match clock.as_str() {
        "monotonic" => libc::CLOCK_MONOTONIC,
        "realtime" => libc::CLOCK_REALTIME,
        _ => return usage(),
    };
    let (Ok(hz), Ok(secs)) = (hz.parse::<u32>(), secs.parse::<u64>()) else {
        return usage();
    };
    if hz == 0 {
        return usage();
    }
    let period = Duration::from_secs(1) / hz;
    let end = Instant::now() + Duration::from_secs(secs);
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    while Instant::now() < end {
        // SAFETY: `ts` is a valid timespec the call writes.
        if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
            eprintln!(
                "vm-timeloop: clock_gettime: {}",
                std::io::Error::last_os_error()
            );
            return 1;
        }
        std::thread::sleep(period);
    }
    0
}

/// `vm-top-watch PROGRAM ARGS...`.
pub fn watch(args: &[String]) -> i32 {
    let Some((program, rest)) = args.split_first() else {
        eprintln!("usage: vm-top-watch PROGRAM ARGS...");
        return 2;
    };
    let mut loops: Vec<Child> = Vec::new();
    for (arg, name, hz) in LOOPS {
        match Command::new(LOOP_PROGRAM)
            .args([*arg, &hz.to_string(), LOOP_LIMIT_SECS])
            .spawn()
        {
            Ok(child) => {
                println!("loop {} {name} {hz}", child.id());
                loops.push(child);
            }
            Err(e) => {
                eprintln!("vm-top-watch: {LOOP_PROGRAM}: {e}");
                end(&mut loops);
                return 1;
            }
        }
    }
    // A moment for each loop to exec and start reading.
    std::thread::sleep(Duration::from_millis(200));
    let status = Command::new(program).args(rest).status();
    // Every loop must have lived through PROGRAM's whole window: one that ended early
    // is said.
    for child in &mut loops {
        if let Ok(Some(s)) = child.try_wait() {
            println!("loop {} ended early: {s}", child.id());
        }
    }
    end(&mut loops);
    match status {
        Ok(s) => s.code().unwrap_or(1),
        Err(e) => {
            eprintln!("vm-top-watch: {program}: {e}");
            1
        }
    }
}

/// Kills and reaps the loops.
fn end(loops: &mut Vec<Child>) {
    for mut child in loops.drain(..) {
        let _ = child.kill();
        let _ = child.wait();
    }
}
