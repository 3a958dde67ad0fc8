//! The command line: every subcommand and option, as the parser, `--help`, the man pages
//! and the shell completions all read it.

use clap::{Parser, Subcommand, ValueEnum};

use crate::bench;
use crate::check;
use crate::doctor;
use crate::inspect;
use crate::top;

/// Exit status of a usage error (sysexits' EX_USAGE), for every subcommand: never the
/// doctor's "degraded" (2), so a monitoring script cannot take a typo for a slow clock.
pub const EXIT_USAGE: i32 = 64;
/// Exit status of a run that failed (could not measure, read or write).
pub const EXIT_ERROR: i32 = 1;

/// `vdsotime --version`: the version, then the source it was built from (the commit, and
/// whether the tree had uncommitted changes: build.rs); `-V` prints the version alone.
const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "\nsource: ",
    env!("VDSOTIME_SOURCE")
);

/// Read the time through the vDSO: inspect it, benchmark it, check it, diagnose it.
#[derive(Parser, Debug)]
#[command(
    name = "vdsotime",
    version,
    long_version = LONG_VERSION,
    about,
    max_term_width = 100,
    after_help = "Without a subcommand: the doctor's verdict, a short benchmark, then the machine, the
vDSO and the path of each function, in under 10 seconds.

Examples:
  vdsotime                       # verdict, short benchmark, summary
  vdsotime info --json
  vdsotime bench --peers --svg bench.svg
  vdsotime bench-getrandom
  vdsotime check --duration 2
  vdsotime doctor
  vdsotime dump -o vdso.so && readelf -Ws vdso.so
  vdsotime top --once --duration 2        # as root: who pays system calls for the time
  vdsotime completions bash > vdsotime.bash && . ./vdsotime.bash
  vdsotime man | man -l -

Every command but completions and man takes --json: a document instead of tables.

Exit status: 0 success (doctor: healthy), 2 doctor: degraded, 1 error (a check
failed, or the run could not measure, read or write), 64 usage error (unknown
option or subcommand, bad value), 77 top: not permitted to trace."
)]
pub struct Cli {
    /// Without a subcommand: write the summary, benchmark and verdict as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Kernel, vDSO image, exported symbols, path per function, clocksource, CPU flags.
    ///
    /// Describes the machine and the vDSO this process was given: the kernel and CPU, the
    /// current and available clocksources, the CPU flags and hypervisor that decide whether
    /// the vDSO can serve the clocks, time namespace offsets, the vDSO image's exported
    /// symbols with their versions, and the path vdsotime takes for each function and clock
    /// (a vDSO symbol, the rseq area, or the system call).
    Info(inspect::info::InfoArgs),
    /// ns per call and ratio to the raw vDSO symbol of every time function through
    /// vdsotime, libc, rustix, std and the syscall, in interleaved rounds.
    Bench(bench::BenchArgs),
    /// ns per call of getrandom (4 to 4096 bytes): vDSO, libc, syscall, the getrandom crate.
    ///
    /// Measures getrandom for each request size through every path in interleaved rounds,
    /// as bench does for the clocks, then the first call in fresh processes and the first
    /// draw of a fresh thread and of a forked child.
    BenchGetrandom(bench::getrandom::Args),
    /// Verify library readings against the syscall on every CPU and thread; exit 1 on any
    /// failure.
    Check(check::CheckArgs),
    /// Say whether the vDSO really serves each clock, why not, and what to change; exit 2
    /// if degraded.
    Doctor(doctor::DoctorArgs),
    /// Write the vDSO image as an ELF file for readelf/objdump.
    ///
    /// Copies the vDSO the kernel mapped into this process, byte for byte, to a file or to
    /// standard output (never to a terminal), so the usual ELF tools can read it.
    Dump(inspect::dump::DumpArgs),
    /// Which processes enter the kernel for the time, how often, and why (needs root or
    /// CAP_PERFMON).
    Top(top::TopArgs),
    /// Print a shell completion script (bash, zsh, fish) to standard output.
    ///
    /// The script completes subcommands, options and their values; the packages install
    /// it for each shell already.
    #[command(after_help = "Examples:
  vdsotime completions bash > vdsotime.bash   # source it, or copy it to
                                              # ~/.local/share/bash-completion/completions/vdsotime
  vdsotime completions zsh > _vdsotime        # into a directory of $fpath
  vdsotime completions fish > vdsotime.fish   # into ~/.config/fish/completions/")]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: Shell,
    },
    /// Print the man page vdsotime(1), or write it and one page per subcommand to a
    /// directory.
    ///
    /// The pages are generated from the same definitions as --help; the packages install
    /// them already.
    #[command(after_help = "Examples:
  vdsotime man | man -l -
  vdsotime man --dir man1 && man -l man1/vdsotime-doctor.1")]
    Man {
        /// Write `vdsotime.1` and `vdsotime-SUBCOMMAND.1` into DIR instead.
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
    },
    /// (internal) Time one path's first call in this fresh process; used by `bench` and
    /// `bench-getrandom`.
    #[command(hide = true)]
    FirstCallProbe {
        /// The path whose first call is timed.
        #[arg(value_enum, default_value = "vdsotime")]
        path: crate::first_calls::FirstPath,
    },
}

/// The shells `completions` writes for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    /// bash (bash-completion).
    Bash,
    /// zsh (compsys).
    Zsh,
    /// fish.
    Fish,
}
