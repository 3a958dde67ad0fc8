//! The vDSO's `getrandom`: found, probed for its state parameters, and called.
//!
//! The kernel's ABI (`lib/vdso/getrandom.c`, `include/uapi/linux/random.h`): the call
//! `getrandom(NULL, 0, 0, &params, ~0UL)` fills a `struct vgetrandom_opaque_params`
//! (the state size and the exact `mmap` protection and flags states need) and
//! returns 0. Every other call is `getrandom(buf, len, flags, state, state_len)` and
//! returns the byte count or `-errno`. The result of the probe is a property of the
//! running kernel, so it is looked up once per process, lock-free: racing first
//! callers each probe and store the same values.

use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use linux_raw_sys::general::vgetrandom_opaque_params;

use crate::arch;
use crate::Path;

/// `ssize_t getrandom(void *buf, size_t len, unsigned flags, void *state, size_t state_len)`.
#[cfg(not(target_arch = "powerpc64"))]
type GetrandomFn = unsafe extern "C" fn(*mut u8, usize, u32, *mut u8, usize) -> isize;

/// What the kernel's probe said: the symbol and how to map states for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Address of the vDSO function.
    pub(crate) addr: usize,
    /// `size_of_opaque_state`: bytes of one state, passed as `state_len` on each call.
    pub state_size: usize,
    /// The `prot` argument of the `mmap` that holds states.
    pub mmap_prot: u32,
    /// The `flags` argument of that `mmap` (`MAP_DROPPABLE | MAP_ANONYMOUS` today).
    pub mmap_flags: u32,
    /// The page size: states never cross a page boundary.
    pub page_size: usize,
}

impl Params {
    /// States that fit in one page without crossing its end, 16-byte aligned.
    ///
    /// # Example
    ///
    /// ```
    /// if let Some(p) = vdsotime::random::params() {
    ///     assert!(p.per_page() >= 1);
    /// }
    /// ```
    pub fn per_page(&self) -> usize {
        self.page_size / self.stride()
    }

    /// Distance between two carved states: the size, rounded up to 16 bytes so every
    /// state is aligned for the kernel's `u64` fields on every architecture.
    pub(crate) fn stride(&self) -> usize {
        self.state_size.next_multiple_of(16)
    }
}

/// 0: not looked up yet; 1: no usable vDSO `getrandom`; else the function's address.
static ADDR: AtomicUsize = AtomicUsize::new(0);
const ABSENT: usize = 1;
/// The probe's answer, valid once `ADDR` holds an address. The size is fixed for the
/// life of the process the first time it is stored: states already carved with it
/// must never be called with another.
static SIZE: AtomicUsize = AtomicUsize::new(0);
static PROT: AtomicU32 = AtomicU32::new(0);
static FLAGS: AtomicU32 = AtomicU32::new(0);
static PAGE: AtomicUsize = AtomicUsize::new(0);

/// The probed parameters, or `None` where the vDSO has no usable `getrandom` (no vDSO,
/// an older kernel, a 32-bit target, a probe that failed).
///
/// # Example
///
/// ```
/// match vdsotime::random::params() {
///     Some(p) => println!("{} bytes per state, {} per page", p.state_size, p.per_page()),
///     None => println!("getrandom is the system call here"),
/// }
/// ```
#[inline]
pub fn params() -> Option<Params> {
    let addr = match ADDR.load(Ordering::Acquire) {
        0 => resolve(),
        a => a,
    };
    loaded(addr)
}

/// [`params`] if the vDSO was looked up already; `None` rather than look it up.
#[cfg(feature = "std")]
pub(crate) fn params_if_looked_up() -> Option<Params> {
    loaded(ADDR.load(Ordering::Acquire))
}

/// The parameters behind a value of `ADDR`.
#[inline]
fn loaded(addr: usize) -> Option<Params> {
    if addr == 0 || addr == ABSENT {
        return None;
    }
    Some(Params {
        addr,
        state_size: SIZE.load(Ordering::Relaxed),
        mmap_prot: PROT.load(Ordering::Relaxed),
        mmap_flags: FLAGS.load(Ordering::Relaxed),
        page_size: PAGE.load(Ordering::Relaxed),
    })
}

/// Forgets the lookup, after the caller named another vDSO image (`init_from_image`).
pub(crate) fn reset() {
    ADDR.store(0, Ordering::Release);
}

/// The path of the vDSO symbol, if there is a usable one.
pub(crate) fn path() -> Path {
    let t = arch::NATIVE;
    match (params(), t.getrandom, crate::vdso()) {
        (Some(_), Some(name), Some(v)) => Path::Vdso {
            symbol: name,
            version: v.lookup(name, Some(t.version)).and_then(|s| s.version),
        },
        _ => Path::Syscall,
    }
}

#[cold]
#[inline(never)]
fn resolve() -> usize {
    let found = probe();
    let addr = match found {
        Some(p) => {
            // First size wins; a later image that disagrees (it cannot be this kernel's)
            // is not used.
            let size = match SIZE.compare_exchange(
                0,
                p.state_size,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => p.state_size,
                Err(existing) => existing,
            };
            if size == p.state_size {
                PROT.store(p.mmap_prot, Ordering::Relaxed);
                FLAGS.store(p.mmap_flags, Ordering::Relaxed);
                PAGE.store(p.page_size, Ordering::Relaxed);
                p.addr
            } else {
                ABSENT
            }
        }
        None => ABSENT,
    };
    ADDR.store(addr, Ordering::Release);
    addr
}

/// Looks the symbol up and asks it for the state parameters.
fn probe() -> Option<Params> {
    if cfg!(target_pointer_width = "32") {
        return None; // no droppable mappings on 32-bit kernels: always the syscall
    }
    let t = arch::NATIVE;
    let name = t.getrandom?;
    let addr = crate::vdso()?.lookup(name, Some(t.version))?.address;
    // SAFETY: an all-zero `vgetrandom_opaque_params` is valid (integers only).
    let mut params: vgetrandom_opaque_params = unsafe { core::mem::zeroed() };
    let out = core::ptr::addr_of_mut!(params).cast::<u8>();
    // SAFETY: `addr` is the vDSO's getrandom; with a null buffer, zero length and flags
    // and `~0` as the state length, it writes only the parameters into `params`.
    let ret = unsafe { call(addr, core::ptr::null_mut(), 0, 0, out, usize::MAX) };
    let page_size = crate::auxv::lookup(crate::auxv::AT_PAGESZ).unwrap_or(4096);
    let p = Params {
        addr,
        state_size: params.size_of_opaque_state as usize,
        mmap_prot: params.mmap_prot,
        mmap_flags: params.mmap_flags,
        page_size,
    };
    let usable = ret == 0
        && p.state_size != 0
        && page_size.is_power_of_two()
        && p.stride() <= page_size
        && p.mmap_flags != 0;
    usable.then_some(p)
}

/// Calls the vDSO function at `addr`.
///
/// # Safety
/// `addr` is the vDSO's getrandom; `buf` is writable for `len` bytes (or null with
/// `len` 0); `state` is a state mapped and carved as [`Params`] says, used by no other
/// thread during the call, or the parameters buffer of the probe.
#[inline(always)]
pub(crate) unsafe fn call(
    addr: usize,
    buf: *mut u8,
    len: usize,
    flags: u32,
    state: *mut u8,
    state_len: usize,
) -> isize {
    #[cfg(not(target_arch = "powerpc64"))]
    {
        // SAFETY: `addr` is the code of the vDSO's getrandom, whose C signature is
        // `GetrandomFn` on every architecture but powerpc; the arguments are the
        // caller's.
        unsafe {
            core::mem::transmute::<usize, GetrandomFn>(addr)(buf, len, flags, state, state_len)
        }
    }
    #[cfg(target_arch = "powerpc64")]
    {
        // SAFETY: as above, through powerpc's vDSO call sequence (CR0.SO errors).
        unsafe {
            crate::sys::vdso_call5(
                addr,
                buf as usize,
                len,
                flags as usize,
                state as usize,
                state_len,
            )
        }
    }
}
