//! A program without Rust's standard library, started by the C library's start files:
//! prints CLOCK_MONOTONIC and CLOCK_REALTIME, and the path each call takes.
//! `cargo run --release` in examples/no-std.
//!
//! The link recipe, all in this file and Cargo.toml:
//! - `#![no_main]` and a C `main`: libc's start files (`crt1.o`, which calls
//!   `__libc_start_main`) start the program, so libc must be linked: `#[link(name = "c")]`.
//!   libc also provides `memcpy`, `memset`, `memmove` and `memcmp`, which compiled Rust
//!   code calls.
//! - `panic = "abort"` in Cargo.toml, and a `#[panic_handler]`.
//! - `rust_eh_personality`: the precompiled `core` of `*-linux-gnu` targets refers to it
//!   even when this program aborts on panic; an empty definition satisfies the linker and
//!   is never called.
#![no_std]
#![no_main]

use core::fmt::Write;

use vdsotime::{clock_gettime, ClockId, Function};

#[link(name = "c")]
extern "C" {
    fn write(fd: i32, buf: *const u8, count: usize) -> isize;
}

/// Standard output through write(2).
struct Stdout;

impl Write for Stdout {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let mut rest = s.as_bytes();
        while !rest.is_empty() {
            // SAFETY: `rest` is a live byte slice of `rest.len()` bytes.
            let n = unsafe { write(1, rest.as_ptr(), rest.len()) };
            let n = usize::try_from(n).map_err(|_| core::fmt::Error)?;
            rest = rest.get(n..).ok_or(core::fmt::Error)?;
        }
        Ok(())
    }
}

fn run() -> Result<(), core::fmt::Error> {
    let mut out = Stdout;
    for clock in [ClockId::MONOTONIC, ClockId::REALTIME] {
        match clock_gettime(clock) {
            Ok(t) => writeln!(out, "{clock} {}.{:09}", t.tv_sec, t.tv_nsec)?,
            Err(e) => writeln!(out, "{clock} error {e}")?,
        }
        let path = vdsotime::path(Function::ClockGettime(clock));
        writeln!(out, "{clock} path {path}")?;
    }
    Ok(())
}

#[no_mangle]
pub extern "C" fn main(_argc: i32, _argv: *const *const u8) -> i32 {
    match run() {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    extern "C" {
        fn abort() -> !;
    }
    // SAFETY: abort(3) takes no arguments and never returns.
    unsafe { abort() }
}

/// See the recipe above: referenced by the precompiled `core`, never called.
#[no_mangle]
extern "C" fn rust_eh_personality() {}
