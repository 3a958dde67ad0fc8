//! A call site of the hot path, for reading its machine code:
//! `cargo build --release -p vdsotime --example hot_path && objdump -d --no-show-raw-insn
//! -M intel target/release/examples/hot_path | grep -A30 '<read_monotonic>:'`.

use vdsotime::{ClockId, Errno, Timespec};

/// One `clock_gettime(CLOCK_MONOTONIC)` through vdsotime, kept out of line so its
/// code can be read in isolation.
#[inline(never)]
#[no_mangle]
pub fn read_monotonic() -> Result<Timespec, Errno> {
    vdsotime::clock_gettime(ClockId::MONOTONIC)
}

/// `Instant::now`, for the same purpose.
#[inline(never)]
#[no_mangle]
pub fn instant_now() -> vdsotime::Instant {
    vdsotime::Instant::now()
}

/// A clock id known only at run time: the same code as a constant one, since every id
/// goes to the vDSO.
#[inline(never)]
#[no_mangle]
pub fn read_clock(clock: ClockId) -> Result<Timespec, Errno> {
    vdsotime::clock_gettime(clock)
}

/// `clock_getres` of a run-time id (auxiliary ids take a cold branch to the syscall).
#[inline(never)]
#[no_mangle]
pub fn resolution(clock: ClockId) -> Result<Timespec, Errno> {
    vdsotime::clock_getres(clock)
}

/// `getcpu`: the CPU and node from glibc's rseq area where there is one.
#[inline(never)]
#[no_mangle]
pub fn cpu_and_node() -> Result<(u32, u32), Errno> {
    vdsotime::getcpu()
}

fn main() {
    let _ = std::hint::black_box(instant_now());
    let _ = std::hint::black_box(read_clock(std::hint::black_box(ClockId::MONOTONIC_COARSE)));
    let _ = std::hint::black_box(resolution(std::hint::black_box(ClockId::MONOTONIC)));
    let _ = std::hint::black_box(cpu_and_node());
    let t = read_monotonic().expect("CLOCK_MONOTONIC");
    println!("{}.{:09}", t.tv_sec, t.tv_nsec);
}
