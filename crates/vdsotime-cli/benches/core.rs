//! `cargo bench -p vdsotime-cli`: divan benchmarks of the core library's paths —
//! the fast path per clock, the forced syscall, the raw symbol, and the one-time
//! work (finding and parsing the vDSO). The `vdsotime bench` table is the
//! user-facing version; this is for tracking regressions in the library itself.

use std::hint::black_box;

use vdsotime::{ClockId, Function};

fn main() {
    divan::main();
}

const CLOCKS: [&str; 8] = [
    "REALTIME",
    "MONOTONIC",
    "MONOTONIC_RAW",
    "REALTIME_COARSE",
    "MONOTONIC_COARSE",
    "BOOTTIME",
    "TAI",
    "PROCESS_CPUTIME_ID",
];

fn clock(name: &str) -> ClockId {
    ClockId::ALL
        .into_iter()
        .find(|c| {
            c.name()
                .is_some_and(|n| n.trim_start_matches("CLOCK_") == name)
        })
        .unwrap_or(ClockId::MONOTONIC)
}

#[divan::bench(args = CLOCKS)]
fn clock_gettime(b: divan::Bencher, name: &str) {
    let c = clock(name);
    b.bench(|| vdsotime::clock_gettime(black_box(c)));
}

#[divan::bench(args = CLOCKS)]
fn clock_gettime_syscall(b: divan::Bencher, name: &str) {
    let c = clock(name);
    b.bench(|| vdsotime::syscall::clock_gettime(black_box(c)));
}

#[divan::bench(args = CLOCKS)]
fn clock_gettime_raw_symbol(b: divan::Bencher, name: &str) {
    let Some(p) = vdsotime::raw::clock_gettime() else {
        return;
    };
    let id = clock(name).as_raw();
    b.bench(|| {
        let mut ts = std::mem::MaybeUninit::<vdsotime::Timespec>::uninit();
        // SAFETY: the resolved vDSO clock_gettime with its signature; `ts` is writable.
        let r = unsafe { p(black_box(id), ts.as_mut_ptr()) };
        (r, ts)
    });
}

#[divan::bench]
fn clock_gettime_unsupported() -> Result<vdsotime::Timespec, vdsotime::Errno> {
    vdsotime::clock_gettime(black_box(ClockId::from_raw(12)))
}

#[divan::bench]
fn clock_getres() -> Result<vdsotime::Timespec, vdsotime::Errno> {
    vdsotime::clock_getres(black_box(ClockId::MONOTONIC))
}

#[divan::bench]
fn gettimeofday() -> Result<vdsotime::Timeval, vdsotime::Errno> {
    vdsotime::gettimeofday()
}

#[divan::bench]
fn gettimeofday_syscall() -> Result<vdsotime::Timeval, vdsotime::Errno> {
    vdsotime::syscall::gettimeofday()
}

#[divan::bench]
fn time() -> i64 {
    vdsotime::time()
}

#[divan::bench]
fn time_syscall() -> i64 {
    vdsotime::syscall::time()
}

#[divan::bench]
fn getcpu() -> Result<(u32, u32), vdsotime::Errno> {
    vdsotime::getcpu()
}

#[divan::bench]
fn instant_now() -> vdsotime::Instant {
    vdsotime::Instant::now()
}

#[divan::bench]
fn std_instant_now() -> std::time::Instant {
    std::time::Instant::now()
}

/// The one-time cost: validating the live image and building its symbol view.
#[divan::bench]
fn parse_live_image(b: divan::Bencher) {
    let Some(v) = vdsotime::vdso() else {
        return;
    };
    let bytes = v.bytes();
    b.bench(|| {
        vdsotime::Vdso::parse(black_box(bytes))
            .map(|v| v.symbols().count())
            .ok()
    });
}

#[divan::bench]
fn lookup_symbol(b: divan::Bencher) {
    let Some(v) = vdsotime::vdso() else {
        return;
    };
    let name = vdsotime::arch::NATIVE
        .clock_gettime
        .unwrap_or("__vdso_clock_gettime");
    let version = vdsotime::arch::NATIVE.version;
    b.bench(|| {
        v.lookup(black_box(name), Some(black_box(version)))
            .map(|s| s.address)
    });
}

#[divan::bench]
fn path_query() -> vdsotime::Path {
    vdsotime::path(black_box(Function::ClockGettime(ClockId::MONOTONIC)))
}
