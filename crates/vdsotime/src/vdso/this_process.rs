//! The process's own vDSO: found through the auxiliary vector once, or named by the
//! caller, and recorded in one word that every call, thread and signal handler reads.

use super::{mapped, Confirm, Vdso};
use crate::elf::{Header, Image, Native, NativeImage};
use core::sync::atomic::{AtomicUsize, Ordering};

/// 0: not looked for yet; 1 ([`ABSENT`]): this process has no usable vDSO; else the
/// address of an image [`Vdso::from_address`] accepted, or of the kernel's own mapping
/// that the general parser or the lean reader accepted.
///
/// This one word is all that is published. The length is not stored beside it: it is a
/// function of the image, which stays mapped and unchanged (the contract of
/// [`crate::init_from_image`]), so every reader recomputes it from the header at the
/// address it loaded. A base and a length in two atomics could be read one before and one
/// after a new `init_from_image`, by another thread or by a signal handler that interrupts
/// the publishing thread between its two stores, and pair one image's base with another's
/// length. One word cannot tear, and needs no lock, retry loop or sequence count: a signal
/// handler could wait on those forever for the thread it interrupted.
static BASE: AtomicUsize = AtomicUsize::new(0);
const ABSENT: usize = 1;

/// This process's vDSO, found through the auxiliary vector on first use; `None` when
/// there is none or it failed validation, in which case every call uses syscalls.
///
/// Lock-free and allocation-free: racing first callers each find the same image and
/// store the same address; a reader racing `init_from_image` gets the old image or the
/// new one, whole.
///
/// # Fallback
///
/// `None` is not an error to handle: every function of this crate then makes its system
/// call. It happens under `vdso=0`, valgrind and some emulators, on architectures without
/// a vDSO, and when the process has unmapped its vDSO or made it unreadable (the image's
/// first page is confirmed readable at each call).
///
/// # Example
///
/// ```
/// match vdsotime::vdso() {
///     Some(v) => println!("vDSO at {:#x}, {} bytes", v.base(), v.bytes().len()),
///     None => println!("no vDSO: every call is a system call"),
/// }
/// ```
pub fn vdso() -> Option<Vdso<'static>> {
    match BASE.load(Ordering::Acquire) {
        0 => locate(),
        ABSENT => None,
        // SAFETY: `base` was stored only after the image there was validated; it is
        // read only once its first page is confirmed still readable (a process may unmap
        // its vDSO or make it unreadable at any time, which changes the whole mapping).
        base => unsafe { Vdso::at(base, Confirm::FirstPage) }.ok(),
    }
}

/// The image this process's functions are bound from, read in this process's layout
/// ([`Native`]) for a function's first call: the one recorded (a caller's, or the one a
/// first call found), else the one the auxiliary vector names. That one is recorded, as
/// [`locate`] records it, so that the vector is read once, if it is the kernel's own
/// mapping (an address `PR_GET_AUXV` gave is confirmed whole by [`vdso`] before it is
/// recorded). `None` when there is none, it cannot be read any more, or it is refused.
///
/// The native reading is the general one ([`Vdso`]'s) with the class, byte order and
/// machine fixed at compile time and without counting the symbols; so when it refuses the
/// image the auxiliary vector names, the general reading ([`locate`]) is what decides, and
/// records, whether this process has a vDSO, as [`vdso`] would. It gives the same
/// verdict (a unit test checks it on every mutation of the running image): this function
/// is then served by its system call, and so are the others.
///
/// As for [`vdso`], the first page is confirmed still readable before a byte is read,
/// and the whole image too unless it is the kernel's mapping of it.
#[cold]
pub(crate) fn own() -> Option<NativeImage<'static>> {
    let (addr, confirm, found) = match BASE.load(Ordering::Acquire) {
        0 => {
            // Every function of the native reader, each `#[inline(never)]`.
            crate::elf::prefetch::parser([
                mapped::<Native> as *const () as usize,
                Header::<Native>::parse as *const () as usize,
                Header::<Native>::extent as *const () as usize,
                Image::<Native>::open as *const () as usize,
                NativeImage::<'static>::lookup as *const () as usize,
            ]);
            let Some((addr, confirm)) = own_address() else {
                publish_absent();
                return None;
            };
            (addr, confirm, true)
        }
        ABSENT => return None,
        // Confirmed whole when it was recorded.
        base => (base, Confirm::FirstPage, false),
    };
    // SAFETY: as `mapped` requires: the address of an image (`AT_SYSINFO_EHDR` or one
    // recorded), confirmed as `confirm` says.
    match unsafe { mapped::<Native>(addr, confirm) } {
        Ok(image) => {
            if found && confirm == Confirm::FirstPage {
                BASE.store(addr, Ordering::Release);
            }
            Some(NativeImage::new(image, addr))
        }
        Err(_) => {
            if found {
                let _ = locate();
            }
            None
        }
    }
}

/// `AT_SYSINFO_EHDR`, and what must be confirmed mapped before reading the image there.
fn own_address() -> Option<(usize, Confirm)> {
    use crate::auxv::Source;
    let (addr, source) = crate::auxv::sysinfo_ehdr_from()?;
    let confirm = match source {
        // This process's own AT_SYSINFO_EHDR: the kernel's one mapping of the whole image.
        Source::Own => Confirm::FirstPage,
        // Under an emulator, the host's vector: every range is confirmed.
        Source::Prctl => Confirm::Whole,
    };
    Some((addr, confirm))
}

/// Finds, validates and records the image named by the auxiliary vector, and hands it
/// to the first caller as parsed: nothing is parsed twice.
#[cold]
fn locate() -> Option<Vdso<'static>> {
    let Some((addr, confirm)) = own_address() else {
        publish_absent();
        return None;
    };
    // SAFETY: AT_SYSINFO_EHDR as the kernel reports it: its first page is confirmed still
    // readable (a process may have unmapped its vDSO, or made it unreadable) before it is
    // read, and the rest is confirmed too unless it is the kernel's mapping of the whole
    // image in this process.
    match unsafe { Vdso::sized(addr, confirm) } {
        Ok(v) => {
            BASE.store(addr, Ordering::Release);
            Some(v)
        }
        Err(_) => {
            publish_absent();
            None
        }
    }
}

/// Validates and records the image at `addr` as this process's vDSO.
///
/// # Safety
/// As for [`Vdso::from_address`].
pub(crate) unsafe fn publish(addr: usize) {
    // SAFETY: forwarded from the caller.
    match unsafe { Vdso::from_address(addr) } {
        Ok(_) => BASE.store(addr, Ordering::Release),
        Err(_) => publish_absent(),
    }
}

/// Records that this process has no usable vDSO.
pub(crate) fn publish_absent() {
    BASE.store(ABSENT, Ordering::Release);
}
