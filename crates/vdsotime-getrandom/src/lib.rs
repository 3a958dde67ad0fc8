//! The [`getrandom`] crate's (0.3 and 0.4) custom backend, served by vdsotime: `getrandom::fill`
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
//! `__getrandom_v03_custom` symbol. This crate reads the cfg itself (the macro's expansion
//! holds none), so the crate that invokes the macro needs no `[lints.rust]` declaration of
//! it; [`CUSTOM_BACKEND`] tells a program which backend it was built with.
//!
//! getrandom 0.3 and 0.4 both call the same hook, `__getrandom_v03_custom`, with the
//! same error type layout and encoding, so one invocation serves either version, and both
//! at once in a program whose dependencies use both (the tests build the same program
//! against each).
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

/// Whether this build set `--cfg getrandom_backend="custom"`, so that
/// [`custom_backend!`] defines the hook and getrandom's requests go to vdsotime.
pub const CUSTOM_BACKEND: bool = cfg!(getrandom_backend = "custom");

/// Defines getrandom's `__getrandom_v03_custom` hook (getrandom 0.3 and 0.4 call the
/// same one), served by [`fill_raw`], when the build sets
/// `--cfg getrandom_backend="custom"`; nothing otherwise. Invoke it once, in the binary
/// crate (see the crate docs).
///
/// The cfg is read here, where the macro is defined, not in its expansion, so the
/// invoking crate does not see an `unexpected_cfgs` name.
#[cfg(getrandom_backend = "custom")]
#[macro_export]
macro_rules! custom_backend {
    () => {
        /// getrandom's custom backend hook, served by vdsotime.
        ///
        /// # Safety
        /// getrandom passes a buffer writable for `len` bytes.
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

/// Defines getrandom's `__getrandom_v03_custom` hook when the build sets
/// `--cfg getrandom_backend="custom"`; in this build it does not, so it expands to nothing
/// and getrandom keeps its own backend.
#[cfg(not(getrandom_backend = "custom"))]
#[macro_export]
macro_rules! custom_backend {
    () => {};
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

    /// The hook returns getrandom 0.3's `Result<(), Error>`; getrandom 0.4 reads the same
    /// bits as its own. Every value the hook returns (success, or an errno as a custom
    /// code) must mean the same to 0.4, and the two results must have one size.
    #[test]
    fn getrandom_0_4_reads_what_the_hook_returns_as_0_3_wrote_it() {
        type V03 = Result<(), getrandom::Error>;
        type V04 = Result<(), getrandom04::Error>;
        assert_eq!(core::mem::size_of::<V03>(), core::mem::size_of::<V04>());
        assert_eq!(core::mem::align_of::<V03>(), core::mem::align_of::<V04>());
        let as_04 = |v: V03| -> V04 {
            // SAFETY: the sizes are equal (asserted above, and by transmute itself);
            // both versions define `Error` as a struct of one `NonZeroI32` with the
            // same encoding, which the comparisons below check value by value.
            unsafe { core::mem::transmute::<V03, V04>(v) }
        };
        assert_eq!(as_04(Ok(())), Ok(()));
        for errno in [Errno::EPERM, Errno::ENOSYS, Errno::EINTR, Errno::EFAULT] {
            let code = u16::try_from(errno.raw()).unwrap();
            assert_eq!(
                as_04(Err(error(errno))),
                Err(getrandom04::Error::new_custom(code))
            );
        }
        assert_eq!(
            as_04(Err(error(Errno::from_raw(i32::MAX)))),
            Err(getrandom04::Error::new_custom(u16::MAX))
        );
    }
}
