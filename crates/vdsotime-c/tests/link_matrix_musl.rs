//! The C link matrix (tests/link_matrix.rs) for x86-64 musl: libvdsotime and the preload
//! built for x86_64-unknown-linux-musl, the programs with musl-gcc. Only in the x86-64 glibc
//! build of the tests, which builds the musl one itself; it needs Debian's musl-tools and
//! Rust's x86_64-unknown-linux-musl standard library, and says SKIP (needs musl) without.

#![cfg(all(target_arch = "x86_64", target_env = "gnu"))]

mod support;

use support::matrix::{build, link_mode_tests, run_each_way, Link};
use support::skip::skip;
use support::{install_from, musl, scratch};

fn cell(name: &str, link: Link) {
    let test = format!("link_matrix_musl::{name}");
    let (toolchain, built) = match musl::build() {
        Ok(found) => found,
        Err(why) => return skip(&test, "musl", why),
    };
    let dir = scratch(&format!("matrix-musl-{name}"));
    let prefix = dir.join("prefix");
    install_from(&built, &prefix, &["--no-strip"]);
    match build(&toolchain, link, &prefix, &dir) {
        Ok(program) => run_each_way(&test, &program, &dir),
        Err(why) => skip(&test, "musl", why),
    }
}

link_mode_tests!(cell);
