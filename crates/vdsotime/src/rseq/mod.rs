//! The CPU (and NUMA node) from the calling thread's restartable-sequences area.
//!
//! glibc 2.35+ registers a `struct rseq` for every thread it creates, at a fixed offset
//! from the thread pointer that it exports as `__rseq_offset` (with `__rseq_size`, 0
//! when registration is off). The kernel rewrites the area's `cpu_id` before the thread
//! runs again after any migration, and since Linux 6.3 (`AT_RSEQ_FEATURE_SIZE` ≥ 24) also
//! its `node_id`. Reading them is one load each, where even the vDSO's `getcpu` costs a
//! few: glibc's own `sched_getcpu` does this.
//!
//! The two symbols are referenced weakly, from a data word the dynamic linker fills (0
//! when absent: musl, older glibc, no libc at all), so there is no link-time dependency
//! on glibc and no `dlsym`: resolution is async-signal-safe like the rest of the crate.
//! Only x86-64, i386 and aarch64 have the few lines of asm this takes; elsewhere, and
//! wherever no area is registered, the caller uses the vDSO.

use core::sync::atomic::{AtomicIsize, Ordering::Relaxed};

/// Not looked up yet (the first `getcpu`, `current_cpu`, `area` or `init` does it).
const UNRESOLVED: isize = 1;
/// Looked up: no usable field. Neither sentinel is a multiple of 4, as real offsets are,
/// so one test tells a usable offset from both.
const NONE: isize = 2;

/// Offsets in `struct rseq` (include/uapi/linux/rseq.h).
const CPU_ID: isize = 4;
const NODE_ID: isize = 20;
/// The kernel keeps `node_id` if its feature size reaches past it.
const NODE_END: usize = 24;
/// The kernel's `AT_RSEQ_FEATURE_SIZE`: how much of `struct rseq` it maintains.
const AT_RSEQ_FEATURE_SIZE: usize = 27;

/// Where the fields are: their offsets from the thread pointer, or a sentinel. One cache
/// line, written once; `sched_getcpu` is then one load of `cpu`, one test, one load of the
/// field, as glibc's own.
#[repr(C, align(64))]
struct Fields {
    /// `cpu_id`'s offset, [`UNRESOLVED`] or [`NONE`].
    cpu: AtomicIsize,
    /// `node_id`'s offset where the kernel keeps it, else [`NONE`] (or [`UNRESOLVED`]).
    node: AtomicIsize,
}

static FIELDS: Fields = Fields {
    cpu: AtomicIsize::new(UNRESOLVED),
    node: AtomicIsize::new(UNRESOLVED),
};

/// Whether `at` is an offset (not a sentinel).
#[inline(always)]
const fn usable(at: isize) -> bool {
    at % 4 == 0
}

/// The calling thread's CPU, if its rseq area can say: `None` where there is none or it
/// has not been looked for yet (which the first [`crate::current_cpu`] or
/// [`crate::getcpu`] does; they also know the vDSO and the syscall).
///
/// ```
/// let by_any_means = vdsotime::current_cpu().unwrap(); // looks for the area first
/// if let Some(cpu) = vdsotime::rseq::cpu() {
///     assert!(cpu < 65536 && by_any_means < 65536);
/// }
/// ```
#[inline(always)]
pub fn cpu() -> Option<u32> {
    let at = FIELDS.cpu.load(Relaxed);
    if !usable(at) {
        return None;
    }
    // SAFETY: a usable offset comes from glibc's `__rseq_offset`, which addresses every
    // glibc thread's registered area; `cpu_id` lies inside it.
    let cpu = unsafe { arch::load_u32(at) };
    // Negative: this thread has no registered area (RSEQ_CPU_ID_UNINITIALIZED, ...).
    u32::try_from(cpu as i32).ok()
}

/// The calling thread's CPU and node, if its rseq area keeps both (and has been looked
/// for: see [`cpu`]).
///
/// # Fallback
///
/// `None` where glibc registered no rseq area, the kernel's area has no `node_id`
/// (before Linux 6.3), or a migration raced the read: then [`crate::getcpu`] asks the
/// vDSO or the kernel.
///
/// # Example
///
/// ```
/// if let Some((cpu, node)) = vdsotime::rseq::cpu_and_node() {
///     assert!(cpu < 65536 && node < 1024);
/// }
/// ```
#[inline(always)]
pub fn cpu_and_node() -> Option<(u32, u32)> {
    let at = FIELDS.node.load(Relaxed);
    if !usable(at) {
        return None;
    }
    let cpu_at = at - (NODE_ID - CPU_ID);
    // SAFETY: as in `cpu`; `node_id` lies inside the area too (every registration spans
    // the 32 bytes the kernel requires).
    let (cpu, node, again) = unsafe {
        (
            arch::load_u32(cpu_at),
            arch::load_u32(at),
            arch::load_u32(cpu_at),
        )
    };
    // A migration between the loads rewrites both fields: if `cpu_id` did not change
    // across the read of `node_id`, the pair belongs together (the result is a snapshot
    // that may be stale by the time it is used, as with any getcpu).
    if cpu != again || (cpu as i32) < 0 {
        return None;
    }
    Some((cpu, node))
}

/// Looks for glibc's registration: on the first `getcpu` or `current_cpu` (which alone
/// read the area), or from `crate::init`.
/// `node` is stored first: whoever sees `cpu` resolved sees `node` resolved too.
#[cold]
pub(crate) fn resolve() {
    let (cpu, node) = match find() {
        Some((offset, keeps_node)) => (
            offset + CPU_ID,
            if keeps_node { offset + NODE_ID } else { NONE },
        ),
        None => (NONE, NONE),
    };
    FIELDS.node.store(node, Relaxed);
    FIELDS.cpu.store(cpu, Relaxed);
}

/// Looks for the area if nobody has yet, and says whether this call did: the callers'
/// slow paths ask before they use the vDSO, so that even a process's first `getcpu`
/// reads the area. Lock-free and signal-safe; racing callers store the same values.
#[inline(always)]
pub(crate) fn looked_up_now() -> bool {
    if FIELDS.cpu.load(Relaxed) != UNRESOLVED {
        return false;
    }
    resolve();
    true
}

/// The area's offset from the thread pointer, and whether the kernel keeps `node_id`.
fn find() -> Option<(isize, bool)> {
    let (offset, size) = arch::glibc_registration()?;
    if size == 0 || offset % 4 != 0 {
        return None; // registration switched off (glibc.pthread.rseq=0) or failed
    }
    // `__rseq_size` is the part glibc vouches for (20 before glibc 2.40, whatever the
    // kernel), but every registration spans at least the 32 bytes the kernel requires,
    // into which Linux 6.3+ writes `node_id` on every update: the kernel's feature size
    // alone says whether the field is kept.
    let node =
        crate::auxv::lookup(AT_RSEQ_FEATURE_SIZE).is_some_and(|features| features >= NODE_END);
    Some((offset, node))
}

/// Where this module can look: the state, for tests and `vdsotime info`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RseqArea {
    /// No registered area is known (no glibc 2.35+, registration off, or an
    /// architecture without the lookup here): the vDSO or the syscall answers.
    Absent,
    /// glibc's area: the CPU number comes from it; the node only if `node` is true.
    Glibc {
        /// `__rseq_offset`: the area's offset from the thread pointer.
        offset: isize,
        /// Whether the kernel keeps `node_id` current (Linux 6.3+).
        node: bool,
    },
}

/// The rseq area `getcpu` and `current_cpu` read, looked up if not yet done.
///
/// ```
/// // glibc 2.35+ on x86-64 or aarch64: Glibc { .. }; musl, valgrind, others: Absent.
/// println!("{:?}", vdsotime::rseq::area());
/// ```
pub fn area() -> RseqArea {
    looked_up_now();
    match FIELDS.cpu.load(Relaxed) {
        at if !usable(at) => RseqArea::Absent,
        at => RseqArea::Glibc {
            offset: at - CPU_ID,
            node: usable(FIELDS.node.load(Relaxed)),
        },
    }
}

mod arch;

/// Reads glibc's two variables through the addresses the linker filled in.
#[allow(dead_code)] // unused where `arch` has no lookup
fn read_registration(offset: *const isize, size: *const u32) -> Option<(isize, u32)> {
    if offset.is_null() || size.is_null() {
        return None; // no glibc 2.35+ in this process
    }
    // SAFETY: both are glibc's exported variables (`ptrdiff_t __rseq_offset`,
    // `unsigned int __rseq_size`), set before any user code runs and constant after.
    Some(unsafe { (offset.read(), size.read()) })
}
