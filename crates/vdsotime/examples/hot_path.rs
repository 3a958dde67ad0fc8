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

/// The coarse clock with a constant id: the vDSO-served check folds away.
#[inline(never)]
#[no_mangle]
pub fn read_coarse() -> Result<Timespec, Errno> {
    vdsotime::clock_gettime(ClockId::MONOTONIC_COARSE)
}

fn main() {
    let _ = std::hint::black_box(instant_now());
    let _ = std::hint::black_box(read_coarse());
    let t = read_monotonic().expect("CLOCK_MONOTONIC");
    println!("{}.{:09}", t.tv_sec, t.tv_nsec);
}
