//! Asking for the first call's code before running it.
//!
//! A fresh process runs the reader in its own layout ([`super::NativeImage`]) once, to
//! bind its first function, with none of its code in the CPU's caches. It takes no page
//! fault (the kernel maps a program's code pages around the first one touched), but it
//! fetches each 64-byte line of its code one after another as execution reaches it, each
//! from the last-level cache or memory, where most of a first call's time can go. A
//! prefetch of every line of those functions, issued before the reading, lets the memory
//! system fetch them side by side; the reader then finds them in the second-level cache.
//! What that gains, measured with its command: docs/performance.md, "The first call in a
//! fresh process".
//!
//! The functions are found by their addresses, so each is `#[inline(never)]`: the code
//! that runs is the code prefetched. A prefetch is a hint: it never faults, and where
//! this architecture has none here it does nothing.

/// How much code after each function's address is asked for where the functions do not
/// lie together: more than the largest of them, `NativeImage::lookup` (the sizes, and
/// how they were taken: docs/performance.md, "The first call in a fresh process").
const WINDOW: usize = 2560;
/// The largest range asked for at once: the reader's functions, a few KiB, lie together
/// unless the linker scattered them (with the instantiations of the same code
/// for the `Any` form among them, which are asked for too: only the functions' addresses
/// are known, not where each ends).
const SPAN: usize = 32 * 1024;

/// Prefetches the code of the functions at `functions` (the reader's, each
/// `#[inline(never)]`) into the second-level cache. Their number is fixed at compile
/// time, so that finding the lowest and highest is a few compares, not a loop over a
/// slice of any length (which the compiler vectorizes into more code than it saves).
#[cold]
#[inline(never)]
pub(crate) fn parser<const N: usize>(functions: [usize; N]) {
    if !cfg!(any(
        target_arch = "x86_64",
        all(target_arch = "x86", target_feature = "sse"),
        target_arch = "aarch64"
    )) {
        return;
    }
    let low = functions.iter().copied().fold(usize::MAX, usize::min) & !63;
    let high = functions
        .iter()
        .copied()
        .fold(0, usize::max)
        .saturating_add(WINDOW);
    if high.saturating_sub(low) <= SPAN {
        lines(low, high);
    } else {
        // One pass of the loop in the code, not one per function: the count is hidden
        // from the optimizer, which would unroll it.
        let mut i = 0;
        while let Some(&f) = functions.get(core::hint::black_box(i)) {
            lines(f & !63, f.saturating_add(WINDOW));
            i = i.saturating_add(1);
        }
    }
}

/// Prefetches every 64-byte line of `[from, to)`.
fn lines(from: usize, to: usize) {
    let mut at = from;
    while at < to {
        line(at);
        at = at.saturating_add(64);
    }
}

/// Prefetches the line at `at` into the second-level cache.
#[inline(always)]
fn line(at: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht1` only hints the cache; it never faults, whatever the address.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T1 }>(at as *const i8)
    };
    #[cfg(all(target_arch = "x86", target_feature = "sse"))]
    // SAFETY: as above.
    unsafe {
        core::arch::x86::_mm_prefetch::<{ core::arch::x86::_MM_HINT_T1 }>(at as *const i8)
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: `prfm` only hints the cache; it never faults, whatever the address.
    unsafe {
        core::arch::asm!("prfm pldl2keep, [{0}]", in(reg) at, options(nostack, readonly, preserves_flags))
    };
    #[cfg(not(any(
        target_arch = "x86_64",
        all(target_arch = "x86", target_feature = "sse"),
        target_arch = "aarch64"
    )))]
    let _ = at;
}
