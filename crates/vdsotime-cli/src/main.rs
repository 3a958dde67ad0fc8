//! `vdsotime`: inspect the vDSO, benchmark and verify every time path, and say
//! whether this machine's clocks are served fast. One module per subcommand.

mod arg_values;
mod bench;
mod bench_table;
mod call_paths;
mod causes;
mod check;
mod classify;
mod clocksources;
mod crate_paths;
mod doctor;
mod dump;
mod facts;
mod fault;
mod findings;
mod first_call;
mod getrandom_bench;
mod info;
mod interleave;
mod measure;
mod names;
mod output;
mod peers;
mod profile;
mod prometheus;
#[cfg(target_pointer_width = "32")]
mod raw32;
mod sandwich;
mod seccomp_filter;
mod seccomp_probe;
/// The core's visible-skip helper (`SKIP <test>: <reason>`), shared with the CLI's tests.
#[cfg(test)]
#[path = "../../vdsotime/tests/support/skip.rs"]
mod skip;
mod summary;
mod svg;
mod symptoms;
mod tally;
mod targets;

use clap::{Parser, Subcommand};

/// Exit status of a usage error (sysexits' EX_USAGE), for every subcommand: never the
/// doctor's "degraded" (2), so a monitoring script cannot take a typo for a slow clock.
pub const EXIT_USAGE: i32 = 64;
/// Exit status of a run that failed (could not measure, read or write).
pub const EXIT_ERROR: i32 = 1;

/// Read the time through the vDSO: inspect it, benchmark it, check it, diagnose it.
#[derive(Parser, Debug)]
#[command(
    name = "vdsotime",
    version,
    about,
    after_help = "Without a subcommand: a summary (vDSO, symbols, paths, clocksource), a short
benchmark and the doctor's verdict, in under 10 seconds.

Examples:
  vdsotime                 summary
  vdsotime info --json
  vdsotime bench --peers --svg bench.svg
  vdsotime bench-getrandom
  vdsotime check --duration 5
  vdsotime doctor
  vdsotime dump -o vdso.so && readelf -Ws vdso.so

Exit status: 0 success (doctor: healthy), 2 doctor: degraded, 1 error (a check
failed, or the run could not measure, read or write), 64 usage error (unknown
option or subcommand, bad value)."
)]
struct Cli {
    /// Write JSON to standard output instead of tables.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Kernel, vDSO image, exported symbols, path per function, clocksource, CPU flags.
    #[command(after_help = "Examples:
  vdsotime info
  vdsotime info --json | jq '.vdso.symbols[].name'")]
    Info,
    /// ns per call and ratio to the raw vDSO symbol of every time function through vdsotime, libc, rustix, std and the syscall, in interleaved rounds.
    Bench(bench::BenchArgs),
    /// Verify library readings against the syscall on every CPU and thread; exit 1 on any failure.
    Check(check::CheckArgs),
    /// Say whether the vDSO really serves each clock and what to change if not; exit 2 if degraded.
    Doctor(doctor::DoctorArgs),
    /// Write the vDSO image as an ELF file for readelf/objdump.
    Dump(dump::DumpArgs),
    /// ns per call of getrandom (4 to 4096 bytes): vDSO, libc, syscall, the getrandom crate.
    BenchGetrandom(getrandom_bench::Args),
    /// (internal) Time the library's first call in this fresh process; used by `bench`.
    #[command(hide = true)]
    FirstCallProbe,
}

fn main() {
    // Output piped into `head` ends the process quietly, as for any Unix tool, instead of
    // a panic in println!.
    // SAFETY: restores the default action of one signal before any thread exists.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version are "errors" that go to stdout and succeed.
            let _ = e.print();
            std::process::exit(if e.use_stderr() { EXIT_USAGE } else { 0 });
        }
    };
    let result = match &cli.command {
        None => summary::run(cli.json),
        Some(Command::Info) => info::run(cli.json),
        Some(Command::Bench(a)) => bench::run(a, cli.json),
        Some(Command::Check(a)) => check::run(a, cli.json),
        Some(Command::Doctor(a)) => doctor::run(a, cli.json),
        Some(Command::Dump(a)) => dump::run(a, cli.json),
        Some(Command::BenchGetrandom(a)) => getrandom_bench::run(a, cli.json),
        Some(Command::FirstCallProbe) => first_call::probe(),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(msg) => {
            eprintln!("vdsotime: {msg}");
            std::process::exit(EXIT_ERROR);
        }
    }
}
