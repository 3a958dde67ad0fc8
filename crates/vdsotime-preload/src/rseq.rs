//! `sched_getcpu` from glibc's restartable-sequences area, as glibc 2.35+ itself does.
//!
//! glibc registers a `struct rseq` for every thread it runs and the kernel keeps its `cpu_id`
//! current; reading it costs about 1 ns, where the vDSO's getcpu costs about 4. Without this,
//! the preload's `sched_getcpu` would be slower than the glibc it replaces. The area's place
//! (`__rseq_offset` from the thread pointer) is looked up once, in the library constructor, with
//! `dlsym`; the clock path only loads it from an atomic. Older glibc, rseq switched off
//! (`glibc.pthread.rseq=0`), a thread glibc did not register, or an architecture without a
//! thread-pointer reader here: `cpu()` says None and the caller uses the vDSO.

use core::ffi::c_uint;
use core::sync::atomic::{AtomicIsize, AtomicU8, Ordering};

/// Offset of `cpu_id` in `struct rseq` (after the u32 `cpu_id_start`).
const CPU_ID: isize = 4;

/// 0: not (yet) usable; 1: `OFFSET` holds `__rseq_offset`.
static STATE: AtomicU8 = AtomicU8::new(0);
static OFFSET: AtomicIsize = AtomicIsize::new(0);

/// Looks up glibc's rseq registration; called once from the ELF constructor.
pub fn init() {
    if thread_pointer().is_none() {
        return;
    }
    // SAFETY: both names are NUL-terminated; RTLD_DEFAULT searches the global scope. dlsym
    // runs here, in the constructor, never on the clock path.
    let (offset, size) = unsafe {
        (
            libc::dlsym(libc::RTLD_DEFAULT, c"__rseq_offset".as_ptr()),
            libc::dlsym(libc::RTLD_DEFAULT, c"__rseq_size".as_ptr()),
        )
    };
    if offset.is_null() || size.is_null() {
        return; // glibc before 2.35
    }
    // SAFETY: glibc defines __rseq_offset as a ptrdiff_t and __rseq_size as an unsigned int,
    // both constant after start-up; dlsym gave their addresses.
    let (offset, size) = unsafe { (offset.cast::<isize>().read(), size.cast::<c_uint>().read()) };
    if size == 0 {
        return; // registration failed or switched off
    }
    OFFSET.store(offset, Ordering::Relaxed);
    STATE.store(1, Ordering::Release);
}

/// The current CPU from the calling thread's rseq area, if glibc registered one.
#[inline]
pub fn cpu() -> Option<c_uint> {
    if STATE.load(Ordering::Acquire) != 1 {
        return None;
    }
    let tp = thread_pointer()?;
    let field = tp
        .wrapping_offset(OFFSET.load(Ordering::Relaxed))
        .wrapping_offset(CPU_ID);
    // SAFETY: glibc placed each thread's registered struct rseq at thread pointer +
    // __rseq_offset, inside the thread's TCB, which lives as long as the thread; the kernel
    // updates cpu_id asynchronously, hence the volatile read.
    let cpu = unsafe { field.cast::<i32>().read_volatile() };
    // Negative: not registered for this thread (RSEQ_CPU_ID_UNINITIALIZED, _REGISTRATION_FAILED).
    c_uint::try_from(cpu).ok()
}

/// The thread pointer glibc's `__rseq_offset` is relative to.
#[inline]
fn thread_pointer() -> Option<*const u8> {
    #[cfg(target_arch = "x86_64")]
    {
        let tp: *const u8;
        // SAFETY: on x86_64 glibc, %fs:0 holds the TCB's own address (the thread pointer); the
        // load has no side effects.
        unsafe {
            core::arch::asm!("mov {}, qword ptr fs:[0]", out(reg) tp,
                options(nostack, readonly, preserves_flags, pure));
        }
        Some(tp)
    }
    #[cfg(target_arch = "aarch64")]
    {
        let tp: *const u8;
        // SAFETY: reading TPIDR_EL0, the thread pointer register, has no side effects.
        unsafe {
            core::arch::asm!("mrs {}, tpidr_el0", out(reg) tp,
                options(nostack, nomem, preserves_flags, pure));
        }
        Some(tp)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        None
    }
}
