//! Read the time on Linux through the vDSO, with the kernel's exact answers.
//!
//! The kernel maps a small shared library, the vDSO, into every process; its
//! `clock_gettime`, `gettimeofday`, `time`, `clock_getres`, `getcpu` and (Linux 6.11+)
//! `getrandom` answer from user space, several times faster than the system calls (the
//! figures, and the command that takes them: the repository's `docs/performance.md`).
//! This crate finds the vDSO in the auxiliary
//! vector, parses its ELF image with every read bounds-checked, and calls it with nothing
//! in between, falling back to raw system calls with the kernel's exact errors wherever
//! the vDSO cannot serve a call. It never allocates on a clock path, never panics (but for
//! [`Instant`]'s `+` and `-` with a `Duration` on overflow, where std's panic too; its
//! `checked_*` methods do not), takes no locks, and is async-signal-safe.
//!
//! ```
//! use vdsotime::{clock_gettime, ClockId, Errno, Function, Instant};
//!
//! let now = clock_gettime(ClockId::REALTIME)?;
//! println!("{}.{:09} s since the epoch", now.tv_sec, now.tv_nsec);
//!
//! let start = Instant::now(); // CLOCK_MONOTONIC, like std::time::Instant
//! let _elapsed = start.elapsed();
//!
//! // Errors are the kernel's own.
//! assert_eq!(clock_gettime(ClockId::from_raw(-1)), Err(Errno::EINVAL));
//!
//! // Which path does each call take in this process?
//! println!("{}", vdsotime::path(Function::ClockGettime(ClockId::MONOTONIC)));
//! // "__vdso_clock_gettime@LINUX_2.6" on x86_64, "syscall" without a vDSO
//! # Ok::<(), vdsotime::Errno>(())
//! ```
//!
//! # Features: `std` and `no_std`
//!
//! The crate is `#![no_std]`. The default feature `std` adds conversions to
//! `std::time::SystemTime`, `std::error::Error` for the error types, the per-thread
//! getrandom states ([`random`]), and finds the vDSO with libc's `getauxval`. Without it
//! (`default-features = false`) the vDSO is found through `/proc/self/auxv`, then
//! `prctl(PR_GET_AUXV)`; a runtime that has the auxiliary vector or the vDSO's address
//! already hands it over with [`init_from_auxv`] or [`init_from_image`]. The calls and
//! their paths are the same; what differs is the set-up and random bytes. With `std`, a
//! process's first call finds the vDSO without a system call (it then confirms the image
//! is mapped, see below); without it, it reads `/proc/self/auxv` (one `openat`, `read`
//! and `close`) first. With no thread-locals to hold a per-thread state, [`getrandom`] and
//! [`random::fill`] make the system call on every call without `std`, and a
//! [`random::State`] the caller holds (one mapped page) is how a `no_std` program gets
//! the vDSO's speed.
//!
//! # An unmapped vDSO
//!
//! A process may unmap its vDSO (sandboxes and checkpoint/restore tools do), or make it
//! unreadable (`mprotect` to `PROT_NONE`). A function's first call, which binds it, has
//! the kernel confirm that the image's first page can still be read before reading it,
//! with one `rt_sigprocmask` system call (given the page as the signal set to read and an
//! invalid `how`, it reads the set, then refuses and changes nothing); if it cannot, that
//! function takes the system call from then on. A function already bound when the image
//! is unmapped keeps calling into it and faults (SIGSEGV), as glibc's own `clock_gettime`
//! does: unmap the vDSO before the first call of any function, or not at all. A program
//! that unmaps or protects part of the image and keeps its first page is not covered
//! (`munmap` or `mprotect` of `[vdso]` changes all of it).
//!
//! ```
//! use vdsotime::{ClockId, Timespec};
//!
//! // No allocation and no std type on the way: usable in a `#![no_std]` program.
//! fn uptime() -> Result<Timespec, vdsotime::Errno> {
//!     vdsotime::clock_gettime(ClockId::BOOTTIME)
//! }
//! assert!(uptime()?.tv_sec >= 0);
//! # Ok::<(), vdsotime::Errno>(())
//! ```
//!
//! A `#![no_std]` `#![no_main]` binary also needs `panic = "abort"` and a link recipe: see
//! `examples/no-std` in the repository.
//!
//! # Sandboxes (seccomp): call [`init`] first
//!
//! A function's first call finds the vDSO and confirms with one system call that it is
//! still mapped (above). A seccomp allowlist whose default action kills (systemd's
//! `SystemCallFilter=`, a hand-written filter) would kill the process there, where glibc,
//! which binds its functions before `main`, works. Call [`init`] before the filter goes in:
//! it binds every function at once, and afterwards the calls the vDSO answers make no
//! system call of their own. Which calls those are depends on the architecture and the
//! clocksource (the repository's `docs/reliability.md` has the table); [`path`] tells for
//! this process, asked before the filter (it confirms the mapping again).
//!
//! ```
//! vdsotime::init(); // before the sandbox
//! // ... install the seccomp filter here ...
//! let t = vdsotime::clock_gettime(vdsotime::ClockId::MONOTONIC)?;
//! # let _ = t;
//! # Ok::<(), vdsotime::Errno>(())
//! ```
//!
//! # Fallback rules
//!
//! - Every clock id goes to the vDSO's `clock_gettime`, as in glibc: the kernel's vDSO
//!   answers the clocks it can read from user space and makes the system call itself for
//!   the others (CPU-time, alarm, fd and invalid ids, or every counter clock when the
//!   clocksource cannot be read from user space). A call makes at most one system call.
//! - An error is final: it is the kernel's own answer, never retried through a second path.
//! - Without a vDSO (the `vdso=0` boot parameter, valgrind, some emulators) every call is
//!   the system call; [`path`] says `syscall`.
//! - Two exceptions, each data in the per-architecture tables: old MIPS vDSOs answer
//!   `ENOSYS` for clocks they cannot serve, which is then asked of the system call; and
//!   `clock_getres` of an auxiliary clock ([`ClockId::aux`]) is the system call, because the
//!   vDSO answers 1 ns for every auxiliary id, enabled or not.
//! - 32-bit targets use the `*64` symbols and the `clock_gettime64` system call; where a
//!   kernel has only time32 vDSO symbols, readings from 2038 on are asked of the system call.
//! - [`getcpu`] and [`current_cpu`] read glibc's rseq area where glibc registered one
//!   (see [`rseq`]), else the vDSO, else the system call.
//! - [`syscall`] is the same API forced through system calls.
//!
//! # Architectures and kernels
//!
//! x86_64 and i686 run natively; aarch64, armv7, riscv64, s390x and powerpc64le run the
//! test suite under QEMU user mode and on Debian's own kernels under qemu-system.
//! loongarch64 compiles (`no_std`) but has never run. mips, mips64 and 32-bit powerpc have
//! per-architecture tables but no system-call code: the crate refuses to build there with
//! a `compile_error!`. Any kernel with a vDSO works; without one, everything is a system
//! call. The vDSO's `getrandom` exists from Linux 6.11 (x86_64) to 6.16 (riscv64).
//!
//! # Minimum Rust version
//!
//! Rust 1.85, with and without `std`.
//!
//! # How it is built
//!
//! Data flows one way: [`auxv`] finds the image, [`elf`] reads it, [`Vdso`] names its
//! symbols, [`arch`] says which ones this architecture exports, the function table
//! binds each entry point once (one atomic pointer each, resolved on first use), and the
//! calls at the crate root use it. Random bytes: [`getrandom`] and [`random`], whose page
//! also shows how the `getrandom` crate (and `rand`) are made to draw from it.
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
mod path;
pub mod random;
pub mod raw;
mod readable;
pub mod rseq;
mod sys;
pub mod syscall;
mod table;
mod time;
mod time32;
mod vdso;

pub use api::{
    clock_getres, clock_getres_to, clock_gettime, clock_gettime_to, current_cpu, getcpu,
    gettimeofday, gettimeofday_to, gettimeofday_tz, init, init_from_auxv, init_from_image, time,
    time_to,
};
pub use arch::ArchTable;
pub use clock::ClockId;
pub use elf::{ElfClass, ElfError, Endian, Symbol, Symbols};
pub use errno::Errno;
pub use instant::Instant;
pub use path::{path, Function, Path};
pub use random::{getrandom, GrndFlags};
pub use rseq::RseqArea;
pub use time::{OutOfRange, Timespec, Timeval, Timezone};
pub use vdso::{vdso, Vdso};
