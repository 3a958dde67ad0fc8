//! `vdsotime bench-getrandom`: ns per call of getrandom at 4, 16, 64, 256 and 4096 bytes,
//! through vdsotime (the per-thread vDSO state), an explicit `State` (the vDSO call with
//! no per-thread lookup: the floor), libc's `getrandom` (glibc before 2.41: the system
//! call), the system call itself and the `getrandom` crate (its default backend: libc).
//! Interleaved rounds, as `vdsotime bench`: each path's figure is its fastest trial, and
//! its ratio to the `vdso-state` floor is the median over rounds.
//!
//! Every probe writes into an uninitialised stack buffer through a raw pointer, so no
//! column pays for zeroing 4 KiB it does not need.

use std::hint::black_box;
use std::mem::MaybeUninit;
use std::time::Duration;

use serde::Serialize;
use vdsotime::random::State;
use vdsotime::GrndFlags;

use crate::bench::DEFAULT_TRIAL_US;
use crate::facts;
use crate::interleave::{self, Lane};
use crate::measure::{Plan, Probe, Sample};
use crate::output::{self, Exit};

/// The request sizes the issue asks for.
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

/// Options of `bench-getrandom`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "Examples:
  vdsotime bench-getrandom
  vdsotime bench-getrandom --trials 401 --bytes 16
  vdsotime bench-getrandom --json")]
pub struct Args {
    /// Rounds: every path runs one trial per round; each path's fastest is reported.
    #[arg(long, default_value_t = 101)]
    pub trials: u32,
    /// Calls per trial for every path (default: sized per path to --trial-us).
    #[arg(long)]
    pub calls: Option<u64>,
    /// Microseconds one trial should take when --calls is not given (at most 10 s).
    #[arg(long, default_value_t = DEFAULT_TRIAL_US, value_parser = crate::arg_values::trial_us)]
    pub trial_us: f64,
    /// Request sizes in bytes (repeat the option; default 4 16 64 256 4096, at most 4096).
    #[arg(long = "bytes", value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub bytes: Vec<u64>,
}

/// One measured cell, as written to JSON.
#[derive(Debug, Serialize)]
pub struct Row {
    /// Always `getrandom`.
    pub function: &'static str,
    /// Bytes asked for per call.
    pub bytes: usize,
    /// The column.
    pub path: &'static str,
    /// For `vdsotime`: the symbol it resolved, or `syscall`.
    pub route: Option<String>,
    /// The timing (flattened).
    #[serde(flatten)]
    pub sample: Sample,
}

/// The `bench-getrandom --json` document.
#[derive(Debug, Serialize)]
pub struct Report {
    /// Kernel release.
    pub kernel: String,
    /// CPU model.
    pub cpu_model: Option<String>,
    /// The vDSO state size, if the vDSO serves getrandom.
    pub state_size: Option<usize>,
    /// Every cell.
    pub rows: Vec<Row>,
}

/// Measures every size through every path, in interleaved rounds per size, each
/// path's ratio taken against the `vdso-state` floor.
pub fn collect(sizes: &[usize], plan: &Plan) -> Report {
    let pb = output::progress(sizes.len() as u64, "bench-getrandom");
    let route = vdsotime::path(vdsotime::Function::Getrandom).to_string();
    let floor = Path::ALL.iter().position(|&p| p == Path::VdsoState);
    let mut rows = Vec::new();
    for &bytes in sizes {
        pb.set_message(format!("{bytes} bytes"));
        let probes: Vec<Probe> = Path::ALL.iter().map(|&p| probe(p, bytes)).collect();
        let lanes: Vec<Lane<'_>> = probes
            .iter()
            .map(|probe| Lane {
                probe,
                reference: floor,
            })
            .collect();
        let samples = interleave::measure(&lanes, plan, 1);
        for (path, sample) in Path::ALL.into_iter().zip(samples) {
            rows.push(Row {
                function: "getrandom",
                bytes,
                path: path.name(),
                route: (path == Path::Vdsotime).then(|| route.clone()),
                sample,
            });
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    let facts = facts::collect();
    Report {
        kernel: facts.kernel_release,
        cpu_model: facts.cpu_model,
        state_size: vdsotime::random::params().map(|p| p.state_size),
        rows,
    }
}

/// The Markdown table: one row per size, one column per path, the speed-up of vdsotime
/// over the system call, and vdsotime's cost over the `vdso-state` floor (the median
/// of the per-round ratios).
pub fn print_table(r: &Report, sizes: &[usize]) {
    let mut header: Vec<&str> = vec!["bytes"];
    header.extend(Path::ALL.map(Path::name));
    header.extend(["syscall/vdsotime", "vdsotime/vdso-state"]);
    let mut t = output::table(&header);
    for &bytes in sizes {
        let sample = |p: Path| {
            r.rows
                .iter()
                .find(|row| row.bytes == bytes && row.path == p.name())
                .map(|row| row.sample)
        };
        let ns = |p: Path| sample(p).map(|s| s.ns);
        let mut line = vec![bytes.to_string()];
        line.extend(Path::ALL.map(|p| ns(p).map_or("-".into(), output::ns)));
        line.push(match (ns(Path::Syscall), ns(Path::Vdsotime)) {
            (Some(s), Some(v)) if v > 0.0 => format!("{:.2}x", s / v),
            _ => "-".into(),
        });
        line.push(
            sample(Path::Vdsotime)
                .and_then(|s| s.ratio_to_raw)
                .map_or("-".into(), |x| format!("{x:.2}x")),
        );
        t.add_row(line);
    }
    output::align_numbers(&mut t);
    println!("{t}");
}

/// Runs `vdsotime bench-getrandom`.
pub fn run(a: &Args, json: bool) -> Exit {
    let plan = Plan {
        trials: a.trials.max(1),
        calls: a.calls,
        trial_time: Duration::from_secs_f64(a.trial_us * 1e-6),
    };
    let sizes: Vec<usize> = if a.bytes.is_empty() {
        SIZES.to_vec()
    } else {
        a.bytes.iter().map(|&b| b as usize).collect()
    };
    let report = collect(&sizes, &plan);
    if json {
        output::print_json(&report)?;
    } else {
        println!(
            "getrandom, ns per call (fastest of {} interleaved rounds); vdsotime path: {}; kernel {}",
            plan.trials,
            vdsotime::path(vdsotime::Function::Getrandom),
            report.kernel
        );
        print_table(&report, &sizes);
    }
    Ok(0)
}
