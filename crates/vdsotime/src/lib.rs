//! Read the time on Linux through the vDSO, with the kernel's exact answers.
//!
//! The kernel maps a small shared library, the vDSO, into every process; its
//! `clock_gettime`, `gettimeofday`, `time`, `clock_getres` and `getcpu` answer from
//! user space about ten times faster than the system calls. This crate finds it in the
//! auxiliary vector, parses its ELF image with every read bounds-checked, and calls it
//! with no overhead, falling back to raw system calls (with the kernel's exact errors)
//! wherever the vDSO cannot serve a call. It is `no_std`, never allocates, never
//! panics, takes no locks, and is async-signal-safe.
//!
//! ```
//! use vdsotime::{clock_gettime, ClockId, Function, Instant};
//!
//! let now = clock_gettime(ClockId::REALTIME)?;
//! println!("{}.{:09} since the epoch", now.tv_sec, now.tv_nsec);
//!
//! let start = Instant::now();
//! let _elapsed = start.elapsed();
//!
//! // Which path does each call take here?
//! println!("{}", vdsotime::path(Function::ClockGettime(ClockId::MONOTONIC)));
//! # Ok::<(), vdsotime::Errno>(())
//! ```
//!
//! Random bytes too: [`getrandom`] serves `getrandom(2)` from the vDSO where the kernel
//! exports it (Linux 6.11+), see [`random`].
//!
//! Data flows one way: [`auxv`] finds the image, [`elf`] reads it, [`Vdso`] names its
//! symbols, [`arch`] says which ones this architecture exports, the function table
//! binds each entry point once, and the calls at the crate root use it. [`syscall`] is
//! the same API forced through system calls.
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(any(feature = "std", test))]
extern crate std;

mod api;
pub mod arch;
pub mod auxv;
mod clock;
pub mod elf;
mod errno;
mod instant;
pub mod random;
pub mod raw;
pub mod rseq;
mod sys;
pub mod syscall;
mod table;
mod time;
mod time32;
mod vdso;

pub use api::{
    clock_getres, clock_getres_to, clock_gettime, clock_gettime_to, current_cpu, getcpu,
    gettimeofday, gettimeofday_to, gettimeofday_tz, init_from_auxv, init_from_image, path, time,
    time_to, Function, Path,
};
pub use arch::ArchTable;
pub use clock::ClockId;
pub use elf::{ElfClass, ElfError, Endian, Symbol, Symbols};
pub use errno::Errno;
pub use instant::Instant;
pub use random::{getrandom, GrndFlags};
pub use rseq::RseqArea;
pub use time::{OutOfRange, Timespec, Timeval, Timezone};
pub use vdso::{vdso, Vdso};
