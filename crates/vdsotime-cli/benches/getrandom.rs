//! `cargo bench -p vdsotime-cli --bench getrandom`: divan benchmarks of getrandom per
//! request size, through vdsotime's per-thread state, an explicit `State` and the forced
//! system call; for tracking regressions in the library (`vdsotime bench-getrandom` is
//! the user-facing table, with libc and the getrandom crate beside them).

use std::hint::black_box;

use vdsotime::random::State;
use vdsotime::GrndFlags;

fn main() {
    divan::main();
}

const SIZES: [usize; 5] = [4, 16, 64, 256, 4096];

#[divan::bench(args = SIZES)]
fn vdsotime_getrandom(b: divan::Bencher, n: usize) {
    let mut buf = vec![0u8; n];
    b.bench_local(|| vdsotime::getrandom(black_box(&mut buf), GrndFlags::NONE));
}

#[divan::bench(args = SIZES)]
fn state_getrandom(b: divan::Bencher, n: usize) {
    let mut buf = vec![0u8; n];
    let mut state = State::new();
    b.bench_local(|| state.getrandom(black_box(&mut buf), GrndFlags::NONE));
}

#[divan::bench(args = SIZES)]
fn syscall_getrandom(b: divan::Bencher, n: usize) {
    let mut buf = vec![0u8; n];
    b.bench_local(|| vdsotime::syscall::getrandom(black_box(&mut buf), GrndFlags::NONE));
}
