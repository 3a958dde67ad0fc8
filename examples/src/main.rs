//! The Rust quick start: read the clocks, convert, see which path each call takes.
//! `cargo run -p vdsotime-examples --bin quickstart`

use std::time::SystemTime;

use vdsotime::{clock_gettime, ClockId, Errno, Function, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The wall clock (CLOCK_REALTIME), and the same instant as a std SystemTime.
    let now = clock_gettime(ClockId::REALTIME)?;
    let wall = SystemTime::try_from(now)?;
    println!("realtime {}.{:09}", now.tv_sec, now.tv_nsec);
    println!("as SystemTime: {wall:?}");

    // Elapsed time on CLOCK_MONOTONIC, like std::time::Instant.
    let start = Instant::now();
    let (cpu, node) = vdsotime::getcpu()?;
    println!("on cpu {cpu}, node {node}, found in {:?}", start.elapsed());

    // Errors are the kernel's own: an unknown clock id is EINVAL.
    assert_eq!(clock_gettime(ClockId::from_raw(-1)), Err(Errno::EINVAL));

    // Where each call goes in this process: a vDSO symbol, the rseq area, or the syscall.
    let monotonic = Function::ClockGettime(ClockId::MONOTONIC);
    println!("clock_gettime(MONOTONIC) -> {}", vdsotime::path(monotonic));
    println!("getcpu -> {}", vdsotime::path(Function::Getcpu));
    Ok(())
}
