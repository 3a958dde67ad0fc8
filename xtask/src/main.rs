//! Developer tasks for vdsotime, run as `cargo xtask <task>` (an alias in .cargo/config.toml).
//!
//! std and libc only: the tasks drive rustup, apt, cargo and QEMU as child processes.

mod apt;
mod binfmt;
mod bpf;
mod cache;
mod cost;
mod cross;
mod cross_c;
mod cross_run;
mod debs;
mod dist;
mod fleet;
mod kernels;
mod qemu;
mod repeat;
mod runner;
mod session;
mod source;
mod targets;
mod toolchain;
mod watch;

use std::env;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("cross") => cross::main(&args[1..]),
        Some("kernels") => kernels::main(&args[1..]),
        Some("dist") => dist::main(&args[1..]),
        Some("copyright") => dist::copyright::main(&args[1..]),
        Some("fleet") => fleet::main(&args[1..]),
        Some("bpf") => bpf::main(&args[1..]),
        Some("-h" | "--help") | None => {
            println!("usage: cargo xtask <task>\n\ntasks:\n  cross    the core tests on every architecture (cargo xtask cross --help)\n  kernels  the tests on real Debian kernels under qemu-system (cargo xtask kernels --help)\n  dist     every release artifact: Debian packages, static binaries (cargo xtask dist --help)\n  fleet    the doctor's unit on a Debian 13 machine with systemd, node_exporter and Prometheus (cargo xtask fleet --help)\n  copyright  the crates linked into the packages, into debian/copyright (cargo xtask copyright --help)\n  bpf      the BPF objects of `vdsotime top` rebuilt, or with --check compared (cargo xtask bpf --help)");
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("xtask: unknown task {other} (try --help)");
            ExitCode::from(2)
        }
    }
}
