//! `env NAME=VALUE... PROGRAM ARGS...`: runs PROGRAM with the variables added to its
//! environment, as coreutils' `env` does, so that one program of the plan gets a variable
//! (`LD_PRELOAD`) that the plan's `env` steps would give every later program.

use std::os::unix::process::CommandExt;
use std::process::Command;

/// Execs the program; returns the exit code to leave with if it cannot.
pub fn main(args: &[String]) -> i32 {
    let split = args
        .iter()
        .position(|a| !a.contains('='))
        .unwrap_or(args.len());
    let (vars, command) = args.split_at(split);
    let Some((program, rest)) = command.split_first() else {
        eprintln!("env: no program to run");
        return 125;
    };
    let pairs = vars.iter().filter_map(|v| v.split_once('='));
    let err = Command::new(program).args(rest).envs(pairs).exec();
    eprintln!("env: {program}: {err}");
    127
}
