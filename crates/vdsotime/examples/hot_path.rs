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

fn main() {
    let t = read_monotonic().expect("CLOCK_MONOTONIC");
    println!("{}.{:09}", t.tv_sec, t.tv_nsec);
}
