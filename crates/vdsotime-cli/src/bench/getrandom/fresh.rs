//! The first getrandom of a short-lived thread or process, through vdsotime, libc and the
//! system call: what a program that draws a few bytes once and exits pays (`mktemp`, an
//! interpreter's hash seed, a pre-fork server's child). Two measurements, each in
//! interleaved rounds (every path once per round, in rotated order), each path's fastest
//! round and the median over rounds of its ratio to the system call:
//!
//! - a fresh thread's first draw of 16 bytes, timed inside the thread (in a process
//!   that has drawn before, whose pool has states to lend);
//! - `fork`, one 16-byte draw in the child, `_exit`, `waitpid`, timed in the parent. The
//!   parent forks before it ever drew through vdsotime, so each child starts as a fresh
//!   process would: no state, no page of states.

use std::hint::black_box;
use std::time::Instant;

use serde::Serialize;

use crate::measure::interleave::{quartiles, rotation};
use crate::output;

/// A way to draw, in table order; the last is the reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Draw {
    Vdsotime,
    Libc,
    Syscall,
}

const DRAWS: [Draw; 3] = [Draw::Vdsotime, Draw::Libc, Draw::Syscall];

impl Draw {
    fn name(self) -> &'static str {
        match self {
            Draw::Vdsotime => "vdsotime",
            Draw::Libc => "libc",
            Draw::Syscall => "syscall",
        }
    }

    fn call(self) -> &'static str {
        match self {
            Draw::Vdsotime => "vdsotime::getrandom (the code behind libvdsotime and the preload)",
            Draw::Libc => "libc::getrandom (glibc: the system call before 2.41)",
            Draw::Syscall => "libc::syscall(SYS_getrandom)",
        }
    }

    /// One draw of 16 bytes; whether it gave 16. Async-signal-safe (a forked child).
    #[inline(never)]
    fn once(self) -> bool {
        let mut buf = [0u8; 16];
        let n = match self {
            Draw::Vdsotime => vdsotime::getrandom(black_box(&mut buf), vdsotime::GrndFlags::NONE)
                .map_or(-1, |n| n as isize),
            // SAFETY: `buf` has room for 16 bytes.
            Draw::Libc => unsafe { libc::getrandom(buf.as_mut_ptr().cast(), 16, 0) },
            // SAFETY: `buf` has room for 16 bytes.
            Draw::Syscall => unsafe {
                libc::syscall(libc::SYS_getrandom, buf.as_mut_ptr(), 16usize, 0) as isize
            },
        };
        black_box(buf);
        n == 16
    }
}

/// One path's rounds.
#[derive(Clone, Debug, Serialize)]
pub struct FreshPath {
    /// `vdsotime`, `libc` or `syscall`.
    pub path: &'static str,
    /// The code timed.
    pub call: &'static str,
    /// Fastest round, ns.
    pub min_ns: f64,
    /// Median round, ns.
    pub median_ns: f64,
    /// Median over rounds of this path's time over the system call's in the same round.
    pub ratio_to_syscall: f64,
    /// First quartile of that ratio.
    pub ratio_q1: f64,
    /// Third quartile of that ratio.
    pub ratio_q3: f64,
}

/// One measurement over every path.
#[derive(Clone, Debug, Serialize)]
pub struct Fresh {
    /// What was timed.
    pub what: &'static str,
    /// Rounds: each ran every path once, in rotated order.
    pub rounds: usize,
    /// One entry per path.
    pub paths: Vec<FreshPath>,
}

impl Fresh {
    /// Prints the table under a title line.
    pub fn print(&self) {
        println!(
            "{}: {} rounds, every path once per round in rotated order",
            self.what, self.rounds
        );
        let mut t = output::table(&[
            "path",
            "fastest ns",
            "median ns",
            "x/syscall median [q1-q3]",
            "call",
        ]);
        for p in &self.paths {
            t.add_row(vec![
                p.path.to_string(),
                output::ns(p.min_ns),
                output::ns(p.median_ns),
                output::ratio_spread(p.ratio_to_syscall, p.ratio_q1, p.ratio_q3),
                p.call.to_string(),
            ]);
        }
        output::align_numbers(&mut t);
        println!("{t}");
    }
}

/// Runs `rounds` rounds of `time` over every path and summarizes them.
fn rounds(
    what: &'static str,
    rounds: usize,
    time: impl Fn(Draw) -> Result<f64, String>,
) -> Result<Fresh, String> {
    let mut ns = vec![Vec::with_capacity(rounds); DRAWS.len()];
    for r in 0..rounds {
        for i in rotation(DRAWS.len(), r) {
            ns[i].push(time(DRAWS[i])?);
        }
    }
    let reference = &ns[DRAWS.len() - 1];
    let paths = DRAWS
        .iter()
        .zip(&ns)
        .map(|(&draw, samples)| {
            let ratios: Vec<f64> = samples
                .iter()
                .zip(reference)
                .map(|(&x, &b)| x / b.max(1.0))
                .collect();
            let (ratio, q1, q3) = quartiles(&ratios);
            FreshPath {
                path: draw.name(),
                call: draw.call(),
                min_ns: samples.iter().copied().fold(f64::INFINITY, f64::min),
                median_ns: quartiles(samples).0,
                ratio_to_syscall: ratio,
                ratio_q1: q1,
                ratio_q3: q3,
            }
        })
        .collect();
    Ok(Fresh {
        what,
        rounds,
        paths,
    })
}

/// A fresh thread's first 16-byte draw, timed inside the thread.
pub fn first_in_a_thread(n: usize) -> Result<Fresh, String> {
    rounds("first getrandom of 16 bytes in a fresh thread", n, |draw| {
        std::thread::spawn(move || {
            let start = Instant::now();
            let ok = draw.once();
            let ns = start.elapsed().as_nanos() as f64;
            ok.then_some(ns)
                .ok_or_else(|| format!("getrandom through {} failed", draw.name()))
        })
        .join()
        .map_err(|_| "a measuring thread panicked".to_string())?
    })
}

/// `fork`, one 16-byte draw in the child, `_exit`, `waitpid`. Call it before this
/// process draws through vdsotime, so that each child starts without a state.
pub fn fork_draw_exit_wait(n: usize) -> Result<Fresh, String> {
    rounds(
        "fork + one 16-byte getrandom in the child + exit + wait",
        n,
        |draw| {
            let start = Instant::now();
            // SAFETY: the child only draws (async-signal-safe) and calls `_exit`.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                let ok = draw.once();
                // SAFETY: ends the child without running the parent's exit handlers.
                unsafe { libc::_exit(if ok { 0 } else { 1 }) };
            }
            if pid < 0 {
                return Err(format!("fork: {}", std::io::Error::last_os_error()));
            }
            let mut status = 0;
            // SAFETY: `status` is writable; `pid` is this process's child.
            let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
            let ns = start.elapsed().as_nanos() as f64;
            if waited != pid || !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
                return Err(format!(
                    "the child's getrandom through {} failed",
                    draw.name()
                ));
            }
            Ok(ns)
        },
    )
}
