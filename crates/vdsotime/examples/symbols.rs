//! Prints this process's vDSO: where it is, its symbols, and the path each call takes.
//! Run with `cargo run -p vdsotime --example symbols`.

use vdsotime::{path, ClockId, Function};

fn main() {
    match vdsotime::vdso() {
        Some(v) => {
            println!(
                "vDSO at {:#x}, {} bytes, {:?} {:?}, e_machine {}",
                v.base(),
                v.bytes().len(),
                v.class(),
                v.endian(),
                v.machine()
            );
            println!(
                "hash tables: gnu={} sysv={} versions={}",
                v.has_gnu_hash(),
                v.has_sysv_hash(),
                v.has_versions()
            );
            for s in v.symbols() {
                println!("  {:#x} {}@{}", s.address, s.name, s.version.unwrap_or("-"));
            }
        }
        None => println!("no vDSO: every call uses system calls"),
    }
    for clock in ClockId::ALL {
        println!(
            "clock_gettime({clock}): {}",
            path(Function::ClockGettime(clock))
        );
    }
    for f in [
        Function::ClockGetres(ClockId::MONOTONIC),
        Function::Gettimeofday,
        Function::Time,
        Function::Getcpu,
    ] {
        println!("{f:?}: {}", path(f));
    }
}
