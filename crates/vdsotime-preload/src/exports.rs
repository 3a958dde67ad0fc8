//! Every name this library defines and exports, one row each: the libc functions it
//! interposes, and nothing else. `tests/exports.rs` checks the table against the
//! library's dynamic symbols (`nm -D`) and against every `#[no_mangle]` function in this
//! crate, so a name added to one and not the other fails there; `VDSOTIME_PRELOAD_DEBUG`
//! reports on these names.

use core::ffi::CStr;

/// Which targets define a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum On {
    /// Every target.
    All,
    /// 32-bit targets: glibc's `_TIME_BITS=64` entry points (`time64.rs`).
    Bits32,
}

impl On {
    /// Whether the target this is compiled for defines the name.
    pub const fn here(self) -> bool {
        match self {
            On::All => true,
            On::Bits32 => cfg!(target_pointer_width = "32"),
        }
    }
}

/// The exported names and where each is defined.
pub const EXPORTS: &[(&CStr, On)] = &[
    (c"clock_gettime", On::All),
    (c"clock_getres", On::All),
    (c"gettimeofday", On::All),
    (c"time", On::All),
    (c"sched_getcpu", On::All),
    (c"getcpu", On::All),
    (c"getrandom", On::All),
    (c"getentropy", On::All),
    (c"__clock_gettime64", On::Bits32),
    (c"__clock_getres64", On::Bits32),
    (c"__gettimeofday64", On::Bits32),
    (c"__time64", On::Bits32),
];
