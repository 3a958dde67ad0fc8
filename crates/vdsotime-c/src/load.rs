//! libvdsotime binds its functions when it is loaded, as glibc binds its own clock functions
//! to the vDSO before `main`: an ELF constructor does what `vdsotime_init()` does. A program
//! that enters a seccomp sandbox in `main`, before its first call, then keeps its clocks
//! without calling `vdsotime_init()` (the first call's own set-up makes a system call).
//!
//! The shared library runs its `.init_array` when the dynamic linker loads it. From the
//! static archive, the linker takes only the objects a program refers to, and a
//! constructor in an object of its own would be left out. So each module that defines
//! exported functions places an entry ([`at_load!`]) in its own object, which the program
//! takes in with any of those functions; where several of them are taken in (or all code is
//! one object, as with LTO), the constructor runs once and the others return at once.
//! `tests/sandbox.rs` links each clock function alone from the archive to hold this.
//!
//! Lazy binding stays as it was: another library's constructor, or threads it starts, may
//! read the time before this one runs. Binding is idempotent and lock-free, so whichever
//! comes first binds, and the constructor finds the same answers.

use core::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Places [`run`] in the `.init_array` of the object the invoking module is compiled into.
macro_rules! at_load {
    () => {
        /// libvdsotime's constructor, in this module's object: see `crate::load`.
        #[used]
        #[link_section = ".init_array"]
        static AT_LOAD: extern "C" fn() = crate::load::run;
    };
}
pub(crate) use at_load;

/// Whether the constructor has run (from any of its entries).
static DONE: AtomicBool = AtomicBool::new(false);

/// The constructor: binds every function once. Takes no arguments, as musl calls
/// `.init_array` entries with none (glibc passes `argc`, `argv`, `envp`).
pub(crate) extern "C" fn run() {
    if DONE.swap(true, Relaxed) {
        return;
    }
    vdsotime::init();
}
