//! The [`getrandom`] crate's (0.3) custom backend, served by vdsotime: `getrandom::fill`
//! and everything built on it (`rand`'s `OsRng`, the seeding of `ThreadRng`, `uuid`,
//! hash-map keys of crates that ask getrandom) get their bytes from the vDSO's getrandom
//! (Linux 6.11+), with one state per thread, instead of one system call per request.
//!
//! In the binary (the root crate), not in a library:
//!
//! ```toml
//! [dependencies]
//! vdsotime-getrandom = { path = "…/crates/vdsotime-getrandom" }
//! ```
//!
//! ```
//! vdsotime_getrandom::custom_backend!();
//! # fn main() {}
//! ```
//!
//! and build with getrandom's cfg, either per command:
//!
//! ```sh
//! RUSTFLAGS='--cfg getrandom_backend="custom"' cargo build --release
//! ```
//!
//! or for the project, in `.cargo/config.toml`:
//!
//! ```toml
//! [target.'cfg(target_os = "linux")']
//! rustflags = ['--cfg', 'getrandom_backend="custom"']
//! ```
//!
//! Without the cfg the macro expands to nothing and getrandom keeps its own backend, so
//! the invocation can stay in the code for every build. The cfg applies to the whole
//! build: set it only where the macro is invoked, or the link fails for want of the
//! `__getrandom_v03_custom` symbol.
//!
//! Why a macro: getrandom asks that the hook be defined once, in the root crate; a
//! definition in a library crate may not be linked at all, or be linked twice.
//!
//! Semantics: [`fill`] (behind the hook) fills the whole buffer, continuing after short
//! reads and retrying `EINTR`, with no flags (blocking until the kernel's generator is
//! ready, as getrandom's own Linux backend). An error from the kernel (`EPERM` from a
//! seccomp filter, `ENOSYS` before Linux 3.17) comes back as
//! `getrandom::Error::new_custom(errno)`: getrandom 0.3 offers no public constructor for
//! an OS error.

pub use getrandom;

use core::mem::MaybeUninit;

use vdsotime::{Errno, GrndFlags};

/// Fills all of `dest` from vdsotime's getrandom: what the hook does.
///
/// ```
/// use core::mem::MaybeUninit;
/// let mut key = [MaybeUninit::<u8>::uninit(); 32];
/// vdsotime_getrandom::fill(&mut key).unwrap();
/// ```
pub fn fill(dest: &mut [MaybeUninit<u8>]) -> Result<(), getrandom::Error> {
    vdsotime::random::fill_uninit(dest, GrndFlags::NONE)
        .map(|_| ())
        .map_err(error)
}

/// The hook's body, for [`custom_backend`].
///
/// # Safety
/// `dest` must be writable for `len` bytes (it may be uninitialised).
#[doc(hidden)]
pub unsafe fn fill_raw(dest: *mut u8, len: usize) -> Result<(), getrandom::Error> {
    // SAFETY: forwarded from the caller.
    unsafe { vdsotime::random::fill_to(dest, len, GrndFlags::NONE) }.map_err(error)
}

/// The kernel's error as a getrandom error (errno values are below 4096).
fn error(e: Errno) -> getrandom::Error {
    getrandom::Error::new_custom(u16::try_from(e.raw()).unwrap_or(u16::MAX))
}

/// Defines getrandom's `__getrandom_v03_custom` hook, served by [`fill_raw`], when the
/// build sets `--cfg getrandom_backend="custom"`; nothing otherwise. Invoke it once, in
/// the binary crate (see the crate docs).
#[macro_export]
macro_rules! custom_backend {
    () => {
        /// getrandom's custom backend hook, served by vdsotime.
        ///
        /// # Safety
        /// getrandom passes a buffer writable for `len` bytes.
        #[cfg(getrandom_backend = "custom")]
        #[unsafe(no_mangle)]
        unsafe extern "Rust" fn __getrandom_v03_custom(
            dest: *mut u8,
            len: usize,
        ) -> ::core::result::Result<(), $crate::getrandom::Error> {
            // SAFETY: forwarded from getrandom, which passes `len` writable bytes.
            unsafe { $crate::fill_raw(dest, len) }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_writes_every_byte() {
        let mut a = [MaybeUninit::new(0u8); 4096];
        fill(&mut a).unwrap();
        // SAFETY: `fill` initialised every byte (they were initialised to 0 before).
        let a: Vec<u8> = a.iter().map(|b| unsafe { b.assume_init() }).collect();
        assert!(a.chunks(32).all(|c| c.iter().any(|&b| b != 0)));
    }

    #[test]
    fn errors_are_custom_codes_with_the_errno() {
        let e = error(Errno::EPERM);
        assert_eq!(e, getrandom::Error::new_custom(Errno::EPERM.raw() as u16));
    }
}
