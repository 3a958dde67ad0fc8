//! [`State`]: one vDSO getrandom state owned by the caller, for programs without
//! thread-locals (`no_std`, runtimes with their own threads) or that want one state per
//! task rather than per thread.

use core::cell::Cell;
use core::fmt;
use core::marker::PhantomData;
use core::mem::MaybeUninit;

use crate::random::entry::{self, Params};
use crate::random::{fill_with, mapping, result, GrndFlags};
use crate::{Errno, Path};

/// A vDSO getrandom state in a page of its own, mapped with exactly the protection and
/// flags the kernel asked for (never on the heap), unmapped on drop.
///
/// It may move to another thread (`Send`) but never be shared (`!Sync`): the kernel
/// allows one thread at a time per state, and `&mut self` on every call enforces it.
/// A signal handler that somehow reaches the same state while it is in use is served
/// by the system call (the vDSO's `in_use` flag).
///
/// Where the vDSO has no getrandom (no vDSO, an older kernel, 32-bit targets) or the
/// page cannot be mapped, the state is empty and every call makes the system call,
/// with the same results.
///
/// ```
/// use vdsotime::random::State;
/// use vdsotime::GrndFlags;
///
/// let mut state = State::new();
/// let mut key = [0u8; 32];
/// state.fill(&mut key, GrndFlags::NONE)?;
/// assert_eq!(state.getrandom(&mut key[..16], GrndFlags::NONBLOCK)?, 16);
/// println!("served by {}", state.path());
/// # Ok::<(), vdsotime::Errno>(())
/// ```
///
/// Shared between threads, it does not compile (moving it to one does):
///
/// ```
/// fn sent<T: Send>() {}
/// sent::<vdsotime::random::State>();
/// ```
///
/// ```compile_fail
/// fn shared<T: Sync>() {}
/// shared::<vdsotime::random::State>();
/// ```
pub struct State {
    /// The mapped page (the state is at its start), or 0 for "system call only".
    page: usize,
    params: Option<Params>,
    /// `Send` but not `Sync`, like a `Cell`.
    _one_thread_at_a_time: PhantomData<Cell<()>>,
}

impl State {
    /// Maps a state, or makes an empty one that uses the system call (see above).
    ///
    /// # Fallback
    ///
    /// Never fails: where the vDSO has no getrandom or the page cannot be mapped
    /// (`mmap` refused: a memory limit, a seccomp filter), the state is empty and every
    /// call on it is the `getrandom` system call. [`State::is_vdso`] tells which.
    ///
    /// # Example
    ///
    /// ```
    /// let mut state = vdsotime::random::State::new();
    /// let mut nonce = [0u8; 12];
    /// state.fill(&mut nonce, vdsotime::GrndFlags::NONE)?;
    /// # Ok::<(), vdsotime::Errno>(())
    /// ```
    pub fn new() -> State {
        let empty = State {
            page: 0,
            params: None,
            _one_thread_at_a_time: PhantomData,
        };
        let Some(p) = entry::params() else {
            return empty;
        };
        match mapping::map_page(&p) {
            Ok(page) => State {
                page,
                params: Some(p),
                _one_thread_at_a_time: PhantomData,
            },
            Err(_) => empty,
        }
    }

    /// Whether calls go through the vDSO: `false` for an empty state (see
    /// [`State::new`]).
    ///
    /// # Example
    ///
    /// ```
    /// let state = vdsotime::random::State::new();
    /// if !state.is_vdso() {
    ///     println!("no vDSO getrandom here: each call is a system call");
    /// }
    /// ```
    pub fn is_vdso(&self) -> bool {
        self.params.is_some()
    }

    /// How calls are served: the vDSO symbol, or `syscall`.
    ///
    /// # Example
    ///
    /// ```
    /// let state = vdsotime::random::State::new();
    /// println!("getrandom through {}", state.path()); // e.g. "__vdso_getrandom"
    /// ```
    pub fn path(&self) -> Path {
        if self.is_vdso() {
            entry::path()
        } else {
            Path::Syscall
        }
    }

    /// `getrandom(2)`: up to `buf.len()` random bytes, with the system call's results
    /// and errors (see [`crate::getrandom`]).
    ///
    /// # Fallback
    ///
    /// Through the vDSO with this state where it has one and the flags are ones the vDSO
    /// serves (`GRND_NONBLOCK`, `GRND_INSECURE`, none); otherwise, and while the kernel's
    /// random pool is not yet initialised, the `getrandom` system call.
    ///
    /// # Errors
    ///
    /// As [`crate::getrandom`].
    ///
    /// # Example
    ///
    /// ```
    /// use vdsotime::{random::State, Errno, GrndFlags};
    /// let mut state = State::new();
    /// let mut buf = [0u8; 64];
    /// assert_eq!(state.getrandom(&mut buf, GrndFlags::NONE)?, 64);
    /// assert_eq!(state.getrandom(&mut buf, GrndFlags::from_raw(0x80)), Err(Errno::EINVAL));
    /// # Ok::<(), Errno>(())
    /// ```
    pub fn getrandom(&mut self, buf: &mut [u8], flags: GrndFlags) -> Result<usize, Errno> {
        // SAFETY: `buf` is writable for its length.
        result(unsafe { self.once(buf.as_mut_ptr(), buf.len(), flags) })
    }

    /// Fills all of `buf` (see [`crate::random::fill`]): calls again after a short
    /// read and after `EINTR`, as a loop around `getrandom(2)` must.
    ///
    /// # Fallback
    ///
    /// As [`State::getrandom`].
    ///
    /// # Errors
    ///
    /// As [`crate::random::fill`].
    ///
    /// # Example
    ///
    /// ```
    /// let mut state = vdsotime::random::State::new();
    /// let mut key = [0u8; 32];
    /// state.fill(&mut key, vdsotime::GrndFlags::NONE)?;
    /// # Ok::<(), vdsotime::Errno>(())
    /// ```
    pub fn fill(&mut self, buf: &mut [u8], flags: GrndFlags) -> Result<(), Errno> {
        // SAFETY: `buf` is writable for its length.
        unsafe {
            fill_with(buf.as_mut_ptr(), buf.len(), flags, |b, n, f| {
                self.once(b, n, f)
            })
        }
    }

    /// Fills all of a possibly uninitialised `buf` and returns it initialised.
    ///
    /// # Fallback
    ///
    /// As [`State::getrandom`].
    ///
    /// # Errors
    ///
    /// As [`State::fill`].
    ///
    /// # Example
    ///
    /// ```
    /// use core::mem::MaybeUninit;
    /// let mut state = vdsotime::random::State::new();
    /// let mut buf = [MaybeUninit::<u8>::uninit(); 16];
    /// let bytes: &mut [u8] = state.fill_uninit(&mut buf, vdsotime::GrndFlags::NONE)?;
    /// assert_eq!(bytes.len(), 16);
    /// # Ok::<(), vdsotime::Errno>(())
    /// ```
    pub fn fill_uninit<'a>(
        &mut self,
        buf: &'a mut [MaybeUninit<u8>],
        flags: GrndFlags,
    ) -> Result<&'a mut [u8], Errno> {
        let (ptr, len) = (buf.as_mut_ptr().cast::<u8>(), buf.len());
        // SAFETY: `buf` is writable for its length.
        unsafe { fill_with(ptr, len, flags, |b, n, f| self.once(b, n, f)) }?;
        // SAFETY: every byte was written.
        Ok(unsafe { core::slice::from_raw_parts_mut(ptr, len) })
    }

    /// One call.
    ///
    /// # Safety
    /// `buf` is writable for `len` bytes.
    unsafe fn once(&mut self, buf: *mut u8, len: usize, flags: GrndFlags) -> isize {
        match &self.params {
            Some(p) if flags.vdso_servable() => {
                // SAFETY: the state at the start of our page, carved as `p` says, used
                // only through `&mut self`; `buf` is the caller's.
                unsafe {
                    entry::call(
                        p.addr,
                        buf,
                        len,
                        flags.raw(),
                        self.page as *mut u8,
                        p.state_size,
                    )
                }
            }
            // SAFETY: forwarded from the caller.
            _ => unsafe { crate::syscall::raw_getrandom(buf, len, flags.raw()) },
        }
    }
}

impl Default for State {
    fn default() -> State {
        State::new()
    }
}

impl Drop for State {
    fn drop(&mut self) {
        if let Some(p) = &self.params {
            // SAFETY: the page is ours alone and nothing uses it after this.
            unsafe { mapping::unmap_page(self.page, p.page_size) };
        }
    }
}

impl fmt::Debug for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("State")
            .field("page", &format_args!("{:#x}", self.page))
            .field("vdso", &self.is_vdso())
            .finish()
    }
}
