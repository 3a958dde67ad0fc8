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
    let words = c_compiler_words();
    let mut cmd = Command::new(&words[0]);
    cmd.args(&words[1..]);
    cmd
}

/// [`c_compiler`] as words: the program, then its target flags.
pub fn c_compiler_words() -> Vec<String> {
    let chosen = std::env::var("VDSOTIME_TEST_CC").unwrap_or_default();
    let words: Vec<String> = chosen.split_whitespace().map(String::from).collect();
    if !words.is_empty() {
        return words;
    }
    let mut words = vec!["cc".to_string()];
    if cfg!(all(target_arch = "x86", target_pointer_width = "32")) {
        words.push("-m32".to_string());
    }
    words
}
