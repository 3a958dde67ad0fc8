//! The C compiler for the target these tests were built for, shared by the C library's and
//! the preload's tests.
//!
//! `VDSOTIME_TEST_CC` names it when the target is not the machine's own: `cargo xtask cross`
//! sets it (e.g. `clang --target=arm-linux-gnueabihf ...`, or gcc with a musl specs file),
//! so the C programs are built with that target's C library and headers. Otherwise `cc`,
//! with `-m32` for an i686 build on an x86_64 machine (`--target i686-unknown-linux-gnu`).

use std::process::Command;

/// The compiler command with its target flags, ready for more arguments.
pub fn c_compiler() -> Command {
    let chosen = std::env::var("VDSOTIME_TEST_CC").unwrap_or_default();
    let mut words = chosen.split_whitespace();
    match words.next() {
        Some(program) => {
            let mut cmd = Command::new(program);
            cmd.args(words);
            cmd
        }
        None => {
            let mut cmd = Command::new("cc");
            if cfg!(all(target_arch = "x86", target_pointer_width = "32")) {
                cmd.arg("-m32");
            }
            cmd
        }
    }
}
