//! Random bytes from the vDSO's `getrandom` (Linux 6.11+): the kernel's ChaCha20
//! generator run in user space, keyed and reseeded by the kernel, with the results and
//! errors of the `getrandom(2)` system call.
//!
//! - [`crate::getrandom`] and [`fill`]: with the `std` feature, a thread's first
//!   [`SYSCALL_DRAWS`] draws make the system call (a thread or process that draws once
//!   costs no more than the system call), and its next one takes a state of its own
//!   from a lock-free pool of pages; the state goes back to the pool when the thread
//!   exits ([`pool_stats`]). Without `std` they make the system call, and [`State`] is
//!   the fast path.
//! - [`State`]: a state the caller owns, for `no_std` programs.
//!
//! What the kernel guarantees and this module keeps: a state is used by one thread at
//! a time; a signal handler that interrupts a call and calls again on the same thread
//! is served by the system call (the vDSO's `in_use` flag); a forked child never
//! repeats its parent's bytes (states live in `MAP_DROPPABLE` memory, which the child
//! gets zeroed, and the vDSO rekeys on the generation change). Flags the vDSO would
//! not answer as the kernel does go straight to the system call. Where there is no
//! usable vDSO `getrandom` (no vDSO, kernels before 6.11, 32-bit targets), everything
//! goes through the system call.
//!
//! # The `getrandom` crate
//!
//! The `vdsotime-getrandom` crate (in this repository, `crates/vdsotime-getrandom`) is
//! the `getrandom` crate's custom backend (0.3 and 0.4), so that `getrandom::fill`, and
//! `rand` through it, draw from this module. In the binary's `Cargo.toml`:
//!
//! ```toml
//! [dependencies]
//! getrandom = "0.3"
//! vdsotime-getrandom = { path = "/path/to/vdsotime/crates/vdsotime-getrandom" }
//! ```
//!
//! in its `main.rs`, once: `vdsotime_getrandom::custom_backend!();`, and the build with
//! getrandom's cfg:
//!
//! ```sh
//! RUSTFLAGS='--cfg getrandom_backend="custom"' cargo build --release
//! ```
//!
//! Without the cfg the macro expands to nothing and getrandom keeps its own backend. The
//! cfg reaches every crate of the build, so set it only for the build of a binary that
//! invokes the macro: a project-wide `.cargo/config.toml` would also reach `cargo test`,
//! whose binaries fail to link without the macro's `__getrandom_v03_custom`. A complete
//! project: `examples/getrandom-backend`; the details: `docs/getrandom.md`.

mod entry;
mod flags;
mod mapping;
#[cfg(feature = "std")]
mod pool;
mod state;
#[cfg(feature = "std")]
mod thread;

use core::mem::MaybeUninit;

pub use entry::{params, Params};
pub use flags::GrndFlags;
#[cfg(feature = "std")]
pub use pool::{pool_stats, PoolStats};
pub use state::State;

use crate::{Errno, Path};

/// How many draws a thread makes by the system call before [`crate::getrandom`] takes
/// a vDSO state for it (with `std`; without, every draw is a system call): a
/// short-lived thread or process costs what the system call costs, and one that keeps
/// drawing pays these few system calls once, then has the vDSO's speed. A draw of more
/// than 256 bytes takes a state at once: past 256 bytes the system call may return fewer
/// bytes than asked when a signal arrives, and the vDSO never does. Taking a
/// process's first state maps a page (what that costs: docs/performance.md, "The first
/// draws"); a later thread's is one system call (the state's first key).
pub const SYSCALL_DRAWS: usize = 4;

/// `getrandom(2)`: fills up to `buf.len()` bytes and says how many, with the system
/// call's semantics: an empty buffer gives 0; a request above `INT_MAX` rounded down to a
/// page is cut to that many bytes, as the kernel does. Use [`fill`] to get the whole
/// buffer.
///
/// # Fallback
///
/// With the `std` feature this uses the calling thread's vDSO state (taken after its
/// first [`SYSCALL_DRAWS`] draws, which make the system call); without it, or where the
/// vDSO has no `getrandom`, the system call ([`State`] is the `no_std` fast path).
///
/// # Errors
///
/// The system call's: `EINVAL` for an unknown flag or `GRND_INSECURE | GRND_RANDOM`
/// (sent straight to the system call, which says so); before the kernel's generator is
/// ready, `EAGAIN` with `GRND_NONBLOCK`, and `EINTR` when a signal interrupts a blocking
/// call (the vDSO then makes the system call itself); whatever a seccomp filter makes
/// the system call return.
///
/// # Example
///
/// ```
/// use vdsotime::{getrandom, Errno, GrndFlags};
/// let mut buf = [0u8; 16];
/// assert_eq!(getrandom(&mut buf, GrndFlags::NONE), Ok(16));
/// assert_eq!(getrandom(&mut buf, GrndFlags::from_raw(8)), Err(Errno::EINVAL));
/// assert_eq!(getrandom(&mut [], GrndFlags::NONE), Ok(0));
/// ```
#[inline]
pub fn getrandom(buf: &mut [u8], flags: GrndFlags) -> Result<usize, Errno> {
    // SAFETY: `buf` is writable for its length.
    unsafe { getrandom_to(buf.as_mut_ptr(), buf.len(), flags) }
}

/// [`crate::getrandom`] into raw memory, for C shims (`libvdsotime`, the preload).
///
/// # Fallback
///
/// As [`crate::getrandom`].
///
/// # Errors
///
/// As [`crate::getrandom`].
///
/// # Safety
/// `buf` must be writable for `len` bytes (it may be uninitialised), or `len` 0.
///
/// # Example
///
/// ```
/// use vdsotime::{random::getrandom_to, GrndFlags};
/// let mut buf = [0u8; 32];
/// // SAFETY: `buf` is writable for its length.
/// let n = unsafe { getrandom_to(buf.as_mut_ptr(), buf.len(), GrndFlags::NONE) };
/// assert_eq!(n, Ok(32));
/// ```
#[inline]
pub unsafe fn getrandom_to(buf: *mut u8, len: usize, flags: GrndFlags) -> Result<usize, Errno> {
    // SAFETY: forwarded from the caller.
    result(unsafe { once(buf, len, flags) })
}

/// Fills all of `buf`: calls [`crate::getrandom`] until every byte is written. A short
/// read continues where it stopped; `EINTR` (a signal while the kernel waited for its
/// generator to be ready) is retried, as glibc's `getentropy` does; any other error is
/// returned, with `buf` partly written. An empty `buf` is `Ok` without a call (its
/// flags are not checked), as glibc's `getentropy` of 0 bytes.
///
/// # Fallback
///
/// Each call is [`crate::getrandom`]'s: the thread's vDSO state, or the system call.
///
/// # Errors
///
/// [`crate::getrandom`]'s, but for `EINTR`, which is retried; a call that returns 0
/// bytes for a non-empty buffer gives `EIO` rather than a loop without end.
///
/// # Example
///
/// ```
/// let mut key = [0u8; 4096];
/// vdsotime::random::fill(&mut key, vdsotime::GrndFlags::NONE).unwrap();
/// assert!(key.iter().any(|&b| b != 0));
/// ```
#[inline]
pub fn fill(buf: &mut [u8], flags: GrndFlags) -> Result<(), Errno> {
    // SAFETY: `buf` is writable for its length.
    unsafe { fill_to(buf.as_mut_ptr(), buf.len(), flags) }
}

/// [`fill`] for a possibly uninitialised buffer (the `getrandom` crate's backend),
/// returning it initialised.
///
/// # Fallback
///
/// As [`fill`].
///
/// # Errors
///
/// As [`fill`].
///
/// # Example
///
/// ```
/// use core::mem::MaybeUninit;
/// let mut buf = [MaybeUninit::<u8>::uninit(); 24];
/// let bytes = vdsotime::random::fill_uninit(&mut buf, vdsotime::GrndFlags::NONE).unwrap();
/// assert_eq!(bytes.len(), 24);
/// ```
pub fn fill_uninit(buf: &mut [MaybeUninit<u8>], flags: GrndFlags) -> Result<&mut [u8], Errno> {
    let (ptr, len) = (buf.as_mut_ptr().cast::<u8>(), buf.len());
    // SAFETY: `buf` is writable for its length.
    unsafe { fill_to(ptr, len, flags) }?;
    // SAFETY: every byte was written.
    Ok(unsafe { core::slice::from_raw_parts_mut(ptr, len) })
}

/// [`fill`] into raw memory, for C shims.
///
/// # Fallback
///
/// As [`fill`].
///
/// # Errors
///
/// As [`fill`].
///
/// # Safety
/// `buf` must be writable for `len` bytes (it may be uninitialised), or `len` 0.
///
/// # Example
///
/// ```
/// use vdsotime::{random::fill_to, GrndFlags};
/// let mut key = [0u8; 64];
/// // SAFETY: `key` is writable for its length.
/// unsafe { fill_to(key.as_mut_ptr(), key.len(), GrndFlags::NONE) }.unwrap();
/// assert!(key.iter().any(|&b| b != 0));
/// ```
#[inline]
pub unsafe fn fill_to(buf: *mut u8, len: usize, flags: GrndFlags) -> Result<(), Errno> {
    // SAFETY: forwarded from the caller.
    unsafe { fill_with(buf, len, flags, |b, n, f| once(b, n, f)) }
}

/// Which path [`crate::getrandom`] takes in this process: the vDSO symbol (a thread's
/// first [`SYSCALL_DRAWS`] draws make the system call, and its first vDSO draw one more,
/// the state's first key), or `syscall`
/// (no vDSO getrandom, no `std`, or no usable thread-exit hook).
pub(crate) fn path() -> Path {
    #[cfg(feature = "std")]
    if thread::hook_usable() {
        return entry::path();
    }
    Path::Syscall
}

/// Forgets the vDSO lookup (`init_from_image`).
pub(crate) fn reset() {
    entry::reset();
}

/// One call: the thread's state, or the system call.
///
/// # Safety
/// `buf` is writable for `len` bytes.
#[inline(always)]
unsafe fn once(buf: *mut u8, len: usize, flags: GrndFlags) -> isize {
    #[cfg(feature = "std")]
    // SAFETY: forwarded from the caller.
    return unsafe { thread::call(buf, len, flags) };
    #[cfg(not(feature = "std"))]
    // SAFETY: forwarded from the caller.
    return unsafe { crate::syscall::raw_getrandom(buf, len, flags.raw()) };
}

/// A raw result: a byte count or `-errno`.
#[inline(always)]
fn result(ret: isize) -> Result<usize, Errno> {
    match Errno::from_ret(ret) {
        Some(e) => Err(e),
        None => Ok(ret as usize),
    }
}

/// Calls `once` until `len` bytes are written (see [`fill`]). A call that returns 0
/// for a non-empty request (no kernel does) gives `EIO`, as glibc's `getentropy`,
/// rather than a loop without end.
///
/// # Safety
/// `buf` is writable for `len` bytes, and `once` writes at most the length it is given.
unsafe fn fill_with(
    buf: *mut u8,
    len: usize,
    flags: GrndFlags,
    mut once: impl FnMut(*mut u8, usize, GrndFlags) -> isize,
) -> Result<(), Errno> {
    let mut done = 0;
    while done < len {
        // SAFETY: `done < len`, so the rest of the buffer is in bounds.
        let ret = once(unsafe { buf.add(done) }, len - done, flags);
        match result(ret) {
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(e),
            Ok(0) => return Err(Errno::EIO),
            Ok(n) => done += n.min(len - done),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    /// `fill_with` continues after short reads, retries `EINTR`, stops at other errors
    /// and at a zero count, as the kernel's callers must.
    #[test]
    fn fill_continues_after_short_reads_and_retries_eintr() {
        let mut script: Vec<isize> = std::vec![5, -(Errno::EINTR.raw() as isize), 3, 100];
        let mut asked = Vec::new();
        let mut buf = [0u8; 10];
        // SAFETY: the closure writes nothing; `buf` is 10 bytes.
        let r = unsafe {
            fill_with(buf.as_mut_ptr(), 10, GrndFlags::NONE, |_, n, _| {
                asked.push(n);
                script.remove(0)
            })
        };
        assert_eq!(r, Ok(()));
        assert_eq!(asked, [10, 5, 5, 2]);
        for (ret, want) in [
            (-(Errno::EAGAIN.raw() as isize), Errno::EAGAIN),
            (0, Errno::EIO),
        ] {
            // SAFETY: as above.
            let r = unsafe { fill_with(buf.as_mut_ptr(), 10, GrndFlags::NONE, |_, _, _| ret) };
            assert_eq!(r, Err(want));
        }
        // SAFETY: nothing is written for an empty buffer.
        let r = unsafe { fill_with(buf.as_mut_ptr(), 0, GrndFlags::NONE, |_, _, _| -22) };
        assert_eq!(r, Ok(()), "an empty buffer makes no call");
    }
}
