//! `vdsotime`: inspect the vDSO, benchmark and verify every time path, and say
//! whether this machine's clocks are served fast.
//!
//! Laid out by what each part does, data flowing one way: `facts` (the machine), `names`
//! and `output` are shared by all; `measure` is the measurement core (how to call each
//! function through each path, and interleaved rounds); `report` holds the benchmark
//! document and `first_calls` the first-call figures it carries. Over them, one folder per family of subcommands: `bench` (bench,
//! bench-getrandom, the first call, tables and SVG), `check` (readings against the kernel,
//! fault injection), `doctor` (the seccomp proof, the machine's profile, the judgement, its
//! output), `inspect` (info, dump) and `top` (the processes that enter the kernel for the
//! time, and why); `summary` is the run without a subcommand.

mod arg_values;
mod aux_clocks;
mod bench;
mod check;
mod cli;
mod doctor;
mod facts;
mod first_calls;
mod inspect;
mod manual;
mod measure;
mod names;
mod output;
mod report;
/// The core's visible-skip helper (`SKIP <test>: <reason>`), shared with the CLI's tests.
#[cfg(test)]
#[path = "../../vdsotime/tests/support/skip.rs"]
mod skip;
mod summary;
mod top;

use clap::{CommandFactory, Parser};

use cli::{Cli, Command, Shell, EXIT_ERROR, EXIT_USAGE};

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
        Some(Command::Info(a)) => inspect::info::run(a.json),
        Some(Command::Bench(a)) => bench::run(a, a.json),
        Some(Command::Check(a)) => check::run(a, a.json),
        Some(Command::Doctor(a)) => doctor::run(a, a.json),
        Some(Command::Dump(a)) => inspect::dump::run(a, a.json),
        Some(Command::Top(a)) => top::run(a),
        Some(Command::BenchGetrandom(a)) => bench::getrandom::run(a, a.json),
        Some(Command::Completions { shell }) => manual::completions(
            Cli::command(),
            match shell {
                Shell::Bash => clap_complete::Shell::Bash,
                Shell::Zsh => clap_complete::Shell::Zsh,
                Shell::Fish => clap_complete::Shell::Fish,
            },
        ),
        Some(Command::Man { dir }) => manual::man(Cli::command(), dir.as_deref()),
        Some(Command::FirstCallProbe { path }) => bench::first_call::probe(*path),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(msg) => {
            eprintln!("vdsotime: {msg}");
            std::process::exit(EXIT_ERROR);
        }
    }
}
