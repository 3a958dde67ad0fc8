//! One vDSO state per thread, for the free function [`crate::getrandom`] (`std` only:
//! it needs thread-locals and a thread-exit hook).
//!
//! The thread's state lives in a `const`-initialised `AtomicUsize` thread-local with no
//! destructor: reading it is one TLS load that can neither allocate, nor panic, nor
//! fail during thread teardown. It is atomic not for other threads (none sees it) but
//! for signal handlers on this thread: the first call marks it `BUSY` with one atomic
//! swap, so a handler that runs between "no state yet" and "taking one" cannot take a
//! second state that the interrupted call would then overwrite and leak. Its value is a
//! state's address or one of these marks:
//!
//! - `NONE`, then `NONE + n`: no state yet, `n` draws made by the system call. A
//!   thread's first [`SYSCALL_DRAWS`] draws make the system call, unless the pool has
//!   a free state (taking one then maps nothing) or the draw is longer than the 256
//!   bytes the system call never cuts short on a signal (the vDSO never cuts one); the
//!   next draw takes a state, mapping a page if it must. A process or thread that draws a few bytes once and exits
//!   (`mktemp`, an interpreter's hash seed, a pre-fork server's child) then pays one
//!   system call, not the vDSO's lookup and the mapping of a page (docs/performance.md,
//!   "The first draws", has what a process's first state costs); a thread that keeps
//!   drawing has the vDSO after those.
//! - `BUSY`: this thread is taking one right now. A signal handler that interrupts
//!   that and calls getrandom makes the system call (the vDSO's own `in_use` flag
//!   does the same for a handler that interrupts the vDSO call itself).
//! - `GONE`: the state went back at thread exit, or none could be had (pool full,
//!   `mmap` refused): the system call, for good on this thread. (While another thread
//!   maps a page, the mark stays `NONE + SYSCALL_DRAWS` and the call makes the system
//!   call once.)
//!
//! The state goes back to the pool when the thread exits, through a `pthread` key
//! destructor, not a Rust `thread_local!` destructor: registering the latter runs
//! glibc's `__cxa_thread_atexit_impl`, which allocates and takes the dynamic linker's
//! lock, so a thread whose first getrandom call came from a signal handler that had
//! interrupted `malloc` could deadlock. Setting a key's value allocates nothing on
//! musl, nor on glibc for the first 32 keys of a process (its per-thread first-level
//! block); a key past those (a process that created 32 keys before its first
//! getrandom) is not used, and every thread makes the system call instead. The key
//! is created once per process by whichever thread gets there first; others make the
//! system call meanwhile rather than wait (a waiting signal handler could deadlock).
//!
//! The key's destructor is code of the object this library is linked into, which may be
//! a plugin that is `dlclose`d while threads that used it live on: their exit would then
//! call into unmapped memory. So the object deletes the key when it is unloaded (a
//! `.fini_array` entry, which `dlclose` and `exit` both run): no thread calls the
//! destructor afterwards. Deleting races neither the key's creation (a key created while
//! the object goes away is deleted by its creator, never published) nor a thread arming
//! its state: a thread sets the key's value only between announcing it in [`SETTING`] and
//! withdrawing that, after checking the key is still live, and the deletion waits for
//! the threads so announced (a few instructions each). The states those threads held stay taken, and the pages stay
//! mapped (one page per 28 threads on x86-64), as the plugin's code can no longer use
//! them; an object that stays loaded (`-z nodelete`) runs the entry at exit, when it
//! changes nothing.

use core::ffi::{c_int, c_uint, c_void};
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::random::{entry, pool, GrndFlags, SYSCALL_DRAWS};

/// The longest request the system call never cuts short: `getrandom(2)` returns every
/// byte of up to 256 even when a signal arrives, and may stop early past that.
const SYSCALL_UNCUT: usize = 256;

const NONE: usize = 0;
/// `NONE + SYSCALL_DRAWS`: the thread's next draw takes a state.
const TAKE_NEXT: usize = NONE + SYSCALL_DRAWS;
const BUSY: usize = TAKE_NEXT + 1;
/// The last mark. States are at page-aligned addresses plus multiples of 16, far above.
const GONE: usize = TAKE_NEXT + 2;

std::thread_local! {
    static SLOT: AtomicUsize = const { AtomicUsize::new(NONE) };
}

extern "C" {
    fn pthread_key_create(
        key: *mut c_uint,
        destructor: Option<unsafe extern "C" fn(*mut c_void)>,
    ) -> c_int;
    fn pthread_setspecific(key: c_uint, value: *const c_void) -> c_int;
    fn pthread_key_delete(key: c_uint) -> c_int;
}

/// Key states: not created, being created, unusable; else the key plus `KEY_BASE`.
static KEY: AtomicUsize = AtomicUsize::new(KEY_NEW);
const KEY_NEW: usize = 0;
const KEY_CREATING: usize = 1;
const KEY_UNUSABLE: usize = 2;
const KEY_BASE: usize = 3;

/// Threads between their last look at [`KEY`] and the end of their `pthread_setspecific`:
/// [`forget_key`] deletes the key only once none is.
static SETTING: AtomicUsize = AtomicUsize::new(0);

/// One getrandom through this thread's state, or the system call.
///
/// # Safety
/// `buf` is writable for `len` bytes.
#[inline]
pub(crate) unsafe fn call(buf: *mut u8, len: usize, flags: GrndFlags) -> isize {
    let slot = SLOT.with(|s| s.load(Ordering::Relaxed));
    if slot > GONE && flags.vdso_servable() {
        if let Some(p) = entry::params() {
            // SAFETY: `slot` is this thread's state, carved as `p` says and used by no
            // other thread; a signal handler reusing it is caught by the vDSO's
            // `in_use` flag. `buf` is the caller's.
            return unsafe {
                entry::call(p.addr, buf, len, flags.raw(), slot as *mut u8, p.state_size)
            };
        }
    }
    // SAFETY: forwarded from the caller.
    unsafe { first_or_fallback(buf, len, flags) }
}

/// Counts a thread's first draws and takes a state once they are done; the system
/// call otherwise.
///
/// # Safety
/// `buf` is writable for `len` bytes.
#[cold]
#[inline(never)]
unsafe fn first_or_fallback(buf: *mut u8, len: usize, flags: GrndFlags) -> isize {
    if flags.vdso_servable() {
        let state = SLOT.with(|s| {
            // Takes a state (or not, as `claim` says) and records the outcome.
            let take = |p: entry::Params| {
                let (next, lent) = claim(&p);
                s.store(next, Ordering::Relaxed);
                lent.map(|state| (state, p))
            };
            match s.swap(BUSY, Ordering::Relaxed) {
                // A first draw: a free state costs no more than the system call, so it
                // is taken now; else one more draw by the system call (below). The vDSO
                // is not looked up for it: a thread or process that draws once pays
                // neither its parsing nor its probe call.
                drawn @ NONE..TAKE_NEXT => match entry::params_if_looked_up() {
                    Some(p) if pool::has_free() => take(p),
                    // The system call may return less than asked past
                    // `SYSCALL_UNCUT` bytes when a signal arrives; the vDSO never
                    // does, so such a draw takes a state at once.
                    _ if len > SYSCALL_UNCUT => entry::params().map_or_else(
                        || {
                            s.store(drawn + 1, Ordering::Relaxed);
                            None
                        },
                        take,
                    ),
                    _ => {
                        s.store(drawn + 1, Ordering::Relaxed);
                        None
                    }
                },
                // No vDSO getrandom: ask again next time (the lookup is then one load).
                TAKE_NEXT => entry::params().map_or_else(
                    || {
                        s.store(TAKE_NEXT, Ordering::Relaxed);
                        None
                    },
                    take,
                ),
                // Inside this thread's own claim (a signal handler): leave it to finish.
                BUSY => None,
                // A signal handler took one between the caller's look and here, or none
                // can be had.
                other => {
                    s.store(other, Ordering::Relaxed);
                    (other > GONE)
                        .then(entry::params)
                        .flatten()
                        .map(|p| (other, p))
                }
            }
        });
        if let Some((state, p)) = state {
            // SAFETY: the state is this thread's, carved as `p` says; `buf` is the
            // caller's.
            return unsafe {
                entry::call(
                    p.addr,
                    buf,
                    len,
                    flags.raw(),
                    state as *mut u8,
                    p.state_size,
                )
            };
        }
    }
    // SAFETY: forwarded from the caller.
    unsafe { crate::syscall::raw_getrandom(buf, len, flags.raw()) }
}

/// Takes a state and arms its return at thread exit: the new slot value, and the
/// state if there is one.
fn claim(p: &entry::Params) -> (usize, Option<usize>) {
    let key = match key() {
        Key::Ready(k) => k,
        Key::NotYet => return (TAKE_NEXT, None),
        Key::Never => return (GONE, None),
    };
    let lent = match pool::take(p) {
        pool::Take::Lent(lent) => lent,
        pool::Take::Later => return (TAKE_NEXT, None),
        pool::Take::Never => return (GONE, None),
    };
    if !set_value(key, lent.token) {
        pool::give_back(lent.token);
        return (GONE, None);
    }
    (lent.state, Some(lent.state))
}

/// Sets this thread's value of `key` to `token`, unless the key was deleted (or is being
/// deleted) meanwhile: whether it was set.
fn set_value(key: c_uint, token: usize) -> bool {
    // Announce, then look: with both sequentially consistent, either this look sees the
    // key withdrawn, or `forget_key`'s wait (after withdrawing it) sees this thread.
    SETTING.fetch_add(1, Ordering::SeqCst);
    let live = KEY.load(Ordering::SeqCst) == key as usize + KEY_BASE;
    // SAFETY: `key` is live and cannot be deleted before SETTING drops; the value is a
    // non-null token, never dereferenced.
    let set = live && unsafe { pthread_setspecific(key, token as *const c_void) } == 0;
    SETTING.fetch_sub(1, Ordering::SeqCst);
    set
}

enum Key {
    Ready(c_uint),
    NotYet,
    Never,
}

/// Whether threads can hold states: false once the key turned out unusable.
pub(crate) fn hook_usable() -> bool {
    KEY.load(Ordering::Acquire) != KEY_UNUSABLE
}

/// The process's key, created on first use.
fn key() -> Key {
    match KEY.load(Ordering::Acquire) {
        KEY_NEW => create_key(),
        KEY_CREATING => Key::NotYet,
        KEY_UNUSABLE => Key::Never,
        k => Key::Ready((k - KEY_BASE) as c_uint),
    }
}

#[cold]
fn create_key() -> Key {
    if KEY
        .compare_exchange(KEY_NEW, KEY_CREATING, Ordering::Acquire, Ordering::Acquire)
        .is_err()
    {
        return Key::NotYet;
    }
    finish_key()
}

/// Creates the key and publishes it, once this thread has made [`KEY`] `KEY_CREATING`.
fn finish_key() -> Key {
    // A key needs its deletion at unload: keep the `.fini_array` entry in the link, in
    // whichever object file the compiler put it.
    // SAFETY: reading an initialised static.
    let _ = unsafe { core::ptr::read_volatile(&FORGET_KEY_AT_UNLOAD) };
    let mut key: c_uint = 0;
    // SAFETY: `key` is writable; `release` is a valid destructor for the key's values.
    let ok = unsafe { pthread_key_create(&mut key, Some(release)) } == 0;
    // glibc allocates the block for keys 32 and up on a thread's first set of such a
    // key: not safe in a signal handler (see the module docs).
    let allocation_free = cfg!(target_env = "musl") || key < 32;
    let next = if ok && allocation_free {
        key as usize + KEY_BASE
    } else {
        KEY_UNUSABLE
    };
    // From the creating state only: if the object is being unloaded meanwhile,
    // `forget_key` has made the key unusable, and it stays so.
    let published = KEY
        .compare_exchange(KEY_CREATING, next, Ordering::AcqRel, Ordering::Acquire)
        .is_ok();
    if published && next >= KEY_BASE {
        return Key::Ready(key);
    }
    if ok {
        // SAFETY: the key this call created, never published: no thread set it.
        unsafe { pthread_key_delete(key) };
    }
    Key::Never
}

/// The key's destructor: at thread exit, gives the thread's state back. Later calls
/// on this thread (other destructors) make the system call.
unsafe extern "C" fn release(token: *mut c_void) {
    SLOT.with(|s| s.store(GONE, Ordering::Relaxed));
    pool::give_back(token as usize);
}

/// Runs when the object holding this code is unloaded or the process exits: see the
/// module docs.
#[used]
#[link_section = ".fini_array"]
static FORGET_KEY_AT_UNLOAD: unsafe extern "C" fn() = forget_key;

/// Deletes the key, so that no thread's exit calls [`release`] after this object is
/// gone. Later calls (other exit handlers) still work: a thread that holds a state
/// keeps it, a thread without one makes the system call.
unsafe extern "C" fn forget_key() {
    let k = KEY.swap(KEY_UNUSABLE, Ordering::SeqCst);
    if k >= KEY_BASE {
        // A thread inside `set_value` may still set the key: wait until none is (each
        // is a few instructions from done; this runs at unload or exit, never in a
        // signal handler of such a thread).
        while SETTING.load(Ordering::SeqCst) != 0 {
            core::hint::spin_loop();
            std::thread::yield_now();
        }
        // SAFETY: `k` is the key this library created, deleted only here, once (the
        // swap); deleting a key runs no destructor.
        unsafe { pthread_key_delete((k - KEY_BASE) as c_uint) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" {
        fn pthread_key_create(
            key: *mut c_uint,
            destructor: Option<unsafe extern "C" fn(*mut c_void)>,
        ) -> c_int;
        fn pthread_getspecific(key: c_uint) -> *mut c_void;
    }

    /// Runs `f` in a child process, whose [`KEY`] starts anew (the key is the process's,
    /// and this one's other tests use it): whether `f` returned true.
    fn in_child(f: fn() -> bool) -> bool {
        // SAFETY: the child only uses atomics and the pthread key calls, then _exit.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork");
        if pid == 0 {
            KEY.store(KEY_NEW, Ordering::SeqCst);
            let code = if f() { 0 } else { 1 };
            // SAFETY: leaves the child without running the parent's exit handlers.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: waits for the child just forked, writing into `status`.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
    }

    /// The object unloaded while its key was being created: the key is not published
    /// afterwards (no thread arms a destructor that would call unmapped code), and the
    /// key created is deleted.
    #[test]
    fn a_key_forgotten_while_created_stays_forgotten() {
        assert!(in_child(|| {
            let began = KEY
                .compare_exchange(KEY_NEW, KEY_CREATING, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok();
            // SAFETY: as the unload would run it.
            unsafe { forget_key() };
            let never = matches!(finish_key(), Key::Never);
            began && never && KEY.load(Ordering::SeqCst) == KEY_UNUSABLE && !hook_usable()
        }));
    }

    /// After the key is deleted, a thread about to arm its state does not set it, even
    /// when another key took its number.
    #[test]
    fn no_value_is_set_on_a_deleted_key() {
        assert!(in_child(|| {
            let Key::Ready(k) = key() else {
                return false;
            };
            if !set_value(k, 0x1230) {
                return false;
            }
            // SAFETY: as the unload would run it.
            unsafe { forget_key() };
            let mut reused: c_uint = 0;
            // SAFETY: `reused` is writable; no destructor.
            let created = unsafe { pthread_key_create(&mut reused, None) } == 0;
            let refused = !set_value(k, 0x4560);
            // SAFETY: `reused` is a live key.
            let untouched = !created || unsafe { pthread_getspecific(reused) }.is_null();
            created && refused && untouched
        }));
    }
}
