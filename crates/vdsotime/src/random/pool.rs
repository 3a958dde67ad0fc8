//! The process's pool of vDSO getrandom states, for the per-thread free function.
//!
//! States are carved a page at a time (up to 64 per page, never across a page
//! boundary) and handed out one per thread; a thread's state comes back when the
//! thread exits and goes to the next thread that asks. The bookkeeping is lock-free
//! and allocation-free, so a thread taking a state can be interrupted by a signal
//! handler, or forked, at any point:
//!
//! - each page is one [`Chunk`] of a fixed table: its address, published once, and a
//!   64-bit mask of free states. Taking a state clears one bit (compare-and-swap),
//!   returning it sets the bit again: bits cannot suffer ABA, unlike a free list.
//! - the bookkeeping lives in ordinary memory, never in the droppable pages, which
//!   the kernel may zero at any time.
//! - pages are never unmapped, so mapped memory is bounded by the most threads that
//!   ever held a state at once, not by how many threads the process ever ran.
//! - one thread of the process maps a page at a time: a thread that finds every state
//!   taken while another maps makes the system call this once and tries again on its
//!   next call, rather than wait (a waiting signal handler could deadlock) or map a
//!   page of its own (64 threads starting together would map 64 pages). The mapper is
//!   named by its process id, so a child forked in the middle of a mapping does not
//!   inherit a mapper that will never finish.
//!
//! After `fork`, the child inherits the masks: states held by the parent's other
//! threads stay taken in the child (a few states, never reused there), and the
//! forking thread keeps its own, which the kernel wiped (the vDSO rekeys it).

use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::random::entry::Params;
use crate::random::mapping;

/// Pages the pool can hold: with 4 KiB pages and the 144-byte x86-64 state, 28
/// states a page, so 28,672 threads holding a state at once. Threads past that use
/// the system call.
const CHUNKS: usize = 1024;

/// One mapped page of states.
struct Chunk {
    /// The page's address; 0 while unpublished. Published in index order, with no
    /// holes: a thread publishes only at the first index it saw empty.
    base: AtomicUsize,
    /// Bit `i` set: state `i` of the page is free.
    free: AtomicU64,
}

static POOL: [Chunk; CHUNKS] = [const {
    Chunk {
        base: AtomicUsize::new(0),
        free: AtomicU64::new(0),
    }
}; CHUNKS];

/// A state lent to a thread: its address, and the token that gives it back.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lent {
    pub(crate) state: usize,
    /// `chunk * 64 + bit + 1`: never 0, so it can be a non-null `pthread` value.
    pub(crate) token: usize,
}

/// States a page holds in the pool: as many as fit, at most one mask's worth.
fn per_chunk(p: &Params) -> u32 {
    p.per_page().min(64) as u32
}

fn lend(p: &Params, index: usize, base: usize, bit: u32) -> Lent {
    Lent {
        state: base + bit as usize * p.stride(),
        token: index * 64 + bit as usize + 1,
    }
}

/// Clears the lowest set bit of `free`, if any. Acquire: the previous holder's writes
/// to the state (through the vDSO) happen before the new holder's.
fn take_bit(free: &AtomicU64) -> Option<u32> {
    let mut seen = free.load(Ordering::Relaxed);
    while seen != 0 {
        let bit = seen.trailing_zeros();
        match free.compare_exchange_weak(
            seen,
            seen & !(1 << bit),
            Ordering::Acquire,
            Ordering::Relaxed,
        ) {
            Ok(_) => return Some(bit),
            Err(now) => seen = now,
        }
    }
    None
}

/// The process (by id) whose thread is mapping a page now; 0 if none.
static MAPPER: AtomicUsize = AtomicUsize::new(0);

/// What [`take`] found.
#[derive(Debug)]
pub(crate) enum Take {
    /// A state for this thread.
    Lent(Lent),
    /// Another thread is mapping a page: ask again on the next call.
    Later,
    /// No page could be mapped, or the table is full.
    Never,
}

/// A free state: one returned by an exited thread, else one from a newly mapped page.
pub(crate) fn take(p: &Params) -> Take {
    if let Some(lent) = reuse(p) {
        return Take::Lent(lent);
    }
    // SAFETY: getpid has no arguments and cannot fail.
    let me = unsafe { crate::sys::syscall(crate::sys::nr::__NR_getpid, 0, 0, 0, 0, 0) } as usize;
    let mapper = MAPPER.load(Ordering::Acquire);
    let claimed = mapper != me
        && MAPPER
            .compare_exchange(mapper, me, Ordering::Acquire, Ordering::Relaxed)
            .is_ok();
    if !claimed {
        return Take::Later;
    }
    // A page published while this thread was looking may have a free state already.
    let taken = match reuse(p) {
        Some(lent) => Take::Lent(lent),
        None => map_and_publish(p).map_or(Take::Never, Take::Lent),
    };
    MAPPER.store(0, Ordering::Release);
    taken
}

/// Whether a state is free now (one given back by an exited thread, or never lent), so
/// that taking it maps nothing.
pub(crate) fn has_free() -> bool {
    POOL.iter()
        .take_while(|chunk| chunk.base.load(Ordering::Acquire) != 0)
        .any(|chunk| chunk.free.load(Ordering::Relaxed) != 0)
}

/// A state given back by an exited thread, if any.
fn reuse(p: &Params) -> Option<Lent> {
    for (i, chunk) in POOL.iter().enumerate() {
        let base = chunk.base.load(Ordering::Acquire);
        if base == 0 {
            break;
        }
        if let Some(bit) = take_bit(&chunk.free) {
            return Some(lend(p, i, base, bit));
        }
    }
    None
}

/// Maps a page, publishes it, and lends its first state.
fn map_and_publish(p: &Params) -> Option<Lent> {
    let page = mapping::map_page(p).ok()?;
    let n = per_chunk(p);
    let all = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
    for (i, chunk) in POOL.iter().enumerate() {
        if chunk.base.load(Ordering::Relaxed) != 0 {
            continue;
        }
        if chunk
            .base
            .compare_exchange(0, page, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            // State 0 is ours; the others become free. Until this store the mask is 0
            // and other threads pass the page by.
            chunk.free.store(all & !1, Ordering::Release);
            return Some(lend(p, i, page, 0));
        }
    }
    // SAFETY: the page was never published, so nothing else knows it.
    unsafe { mapping::unmap_page(page, p.page_size) };
    None
}

/// Gives a state back. Release: pairs with [`take_bit`]'s acquire.
pub(crate) fn give_back(token: usize) {
    let Some(t) = token.checked_sub(1) else {
        return;
    };
    if let Some(chunk) = POOL.get(t / 64) {
        chunk.free.fetch_or(1 << (t % 64), Ordering::Release);
    }
}

/// What the pool holds now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Pages mapped for states (each `page_size` bytes, never unmapped).
    pub pages: usize,
    /// States those pages hold.
    pub states: usize,
    /// States lent to threads now (the others are free).
    pub in_use: usize,
}

/// The pool's counts, for tests and `vdsotime info`: mapped memory stays bounded by
/// the most threads that held a state at once.
///
/// ```
/// let mut buf = [0u8; 16];
/// // The first draws make the system call; the next one takes a state.
/// for _ in 0..=vdsotime::random::SYSCALL_DRAWS {
///     vdsotime::getrandom(&mut buf, vdsotime::GrndFlags::NONE).unwrap();
/// }
/// let s = vdsotime::random::pool_stats();
/// assert!(s.in_use <= s.states);
/// if vdsotime::random::params().is_some() {
///     assert!(s.pages >= 1 && s.in_use >= 1); // this thread holds one
/// }
/// ```
pub fn pool_stats() -> PoolStats {
    let Some(p) = crate::random::entry::params() else {
        return PoolStats::default();
    };
    let per = per_chunk(&p) as usize;
    let mut s = PoolStats::default();
    for chunk in POOL.iter() {
        if chunk.base.load(Ordering::Acquire) == 0 {
            break;
        }
        s.pages += 1;
        s.states += per;
        s.in_use += per - chunk.free.load(Ordering::Relaxed).count_ones() as usize;
    }
    s
}
