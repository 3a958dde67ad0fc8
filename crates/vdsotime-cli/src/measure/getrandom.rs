//! getrandom's paths as probes: vdsotime (the per-thread vDSO state), an explicit `State`
//! (the vDSO call with no per-thread lookup: the floor), libc's `getrandom`, the system
//! call itself and the `getrandom` crate. Used by `bench-getrandom` and by the getrandom
//! row of `bench`.
//!
//! Every probe writes into an uninitialised stack buffer through a raw pointer, so no
//! column pays for zeroing 4 KiB it does not need.

use std::hint::black_box;
use std::mem::MaybeUninit;

use serde::Serialize;
use vdsotime::random::State;
use vdsotime::GrndFlags;

use crate::measure::Probe;

/// The request sizes measured.
pub const SIZES: [usize; 5] = [4, 16, 64, 256, 4096];
const MAX: usize = 4096;

/// The ways getrandom is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Path {
    /// `vdsotime::random::getrandom_to`: the thread's state from the pool.
    Vdsotime,
    /// `State::fill_uninit`: one state held by the caller (one vDSO call).
    VdsoState,
    /// The C library's `getrandom`.
    Libc,
    /// `vdsotime::syscall::getrandom_to`.
    Syscall,
    /// `getrandom::fill_uninit` (getrandom 0.3, default backend).
    GetrandomCrate,
}

impl Path {
    /// Every column, in table order.
    pub const ALL: [Path; 5] = [
        Path::Vdsotime,
        Path::VdsoState,
        Path::Libc,
        Path::Syscall,
        Path::GetrandomCrate,
    ];

    /// Column name, also the JSON `path`.
    pub fn name(self) -> &'static str {
        match self {
            Path::Vdsotime => "vdsotime",
            Path::VdsoState => "vdso-state",
            Path::Libc => "libc",
            Path::Syscall => "syscall",
            Path::GetrandomCrate => "getrandom-crate",
        }
    }
}

/// A probe that asks `path` for `bytes` random bytes per call.
pub fn probe(path: Path, bytes: usize) -> Probe {
    let n = bytes.min(MAX);
    match path {
        Path::Vdsotime => Probe::new(move || {
            let mut buf = [MaybeUninit::<u8>::uninit(); MAX];
            // SAFETY: `buf` has room for `n` bytes.
            let r = unsafe {
                vdsotime::random::getrandom_to(
                    buf.as_mut_ptr().cast(),
                    black_box(n),
                    GrndFlags::NONE,
                )
            };
            let _ = black_box((r, &buf));
        }),
        Path::VdsoState => {
            // One state for this probe, for the life of the process (a probe is `Copy`
            // and `Sync`, a `State` neither: it is reached through its address).
            let state = Box::leak(Box::new(State::new())) as *mut State as usize;
            Probe::new(move || {
                let mut buf = [MaybeUninit::<u8>::uninit(); MAX];
                // SAFETY: `state` is leaked, so it lives on; `bench-getrandom` runs every
                // probe on one thread at a time, so no other reference to it is live.
                let state = unsafe { &mut *(state as *mut State) };
                // One vDSO call: the vDSO never returns less than asked.
                let r = state
                    .fill_uninit(&mut buf[..black_box(n)], GrndFlags::NONE)
                    .map(|b| b.len());
                let _ = black_box((r, &buf));
            })
        }
        Path::Libc => Probe::new(move || {
            let mut buf = [MaybeUninit::<u8>::uninit(); MAX];
            // SAFETY: `buf` has room for `n` bytes.
            let r = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), black_box(n), 0) };
            let _ = black_box((r, &buf));
        }),
        Path::Syscall => Probe::new(move || {
            let mut buf = [MaybeUninit::<u8>::uninit(); MAX];
            // SAFETY: `buf` has room for `n` bytes.
            let r = unsafe {
                vdsotime::syscall::getrandom_to(
                    buf.as_mut_ptr().cast(),
                    black_box(n),
                    GrndFlags::NONE,
                )
            };
            let _ = black_box((r, &buf));
        }),
        Path::GetrandomCrate => Probe::new(move || {
            let mut buf = [MaybeUninit::<u8>::uninit(); MAX];
            let r = getrandom::fill_uninit(&mut buf[..black_box(n)]).map(|b| b.len());
            let _ = black_box((r, &buf));
        }),
    }
}
