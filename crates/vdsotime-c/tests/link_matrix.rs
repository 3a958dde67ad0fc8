//! The C link matrix for the target's C library (glibc here; musl, armv7 and i686 under
//! `cargo xtask cross`): tests/c/link_matrix.c against libvdsotime as install.sh installs
//! it, linked each way a C program can link it, each run with the vDSO, without it (a
//! process with no AT_SYSINFO_EHDR) and under valgrind (no vDSO either). Every cell
//! compares every function with the raw system call, on the main thread and on threads,
//! and checks errno after success and after failure. tests/link_matrix_musl.rs runs the
//! same cells for a musl build.

mod support;

use support::matrix::{build, link_mode_tests, run_each_way, Link, Toolchain};
use support::skip::skip;
use support::{install, scratch};

fn cell(name: &str, link: Link) {
    let test = format!("link_matrix::{name}");
    let dir = scratch(&format!("matrix-{name}"));
    let prefix = dir.join("prefix");
    install(&prefix);
    match build(&Toolchain::target(), link, &prefix, &dir) {
        Ok(program) => run_each_way(&test, &program, &dir),
        Err(why) => skip(&test, "static-libc", why),
    }
}

link_mode_tests!(cell);
