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
    /// 32-bit targets: the time64 entry points glibc (`_TIME_BITS=64`) and musl 1.2 share
    /// (`time64.rs`).
    Bits32,
    /// 32-bit glibc's own time64 names.
    Glibc32,
    /// 32-bit musl's own time64 names.
    Musl32,
}

impl On {
    /// Whether the target this is compiled for defines the name.
    pub const fn here(self) -> bool {
        match self {
            On::All => true,
            On::Bits32 => cfg!(target_pointer_width = "32"),
            On::Glibc32 => cfg!(all(target_pointer_width = "32", target_env = "gnu")),
            On::Musl32 => cfg!(all(target_pointer_width = "32", target_env = "musl")),
        }
    }
}

/// The exported names, by the targets that define them. Add a name here and its
/// `#[no_mangle]` function together (`tests/exports.rs` fails on either alone).
pub const EXPORTS: &[(On, &[&CStr])] = &[
    (
        On::All,
        &[
            c"clock_gettime",
            c"clock_getres",
            c"gettimeofday",
            c"time",
            c"sched_getcpu",
            c"getcpu",
            c"getrandom",
            c"getentropy",
        ],
    ),
    (On::Bits32, &[c"__clock_gettime64", c"__time64"]),
    (On::Glibc32, &[c"__clock_getres64", c"__gettimeofday64"]),
    (
        On::Musl32,
        &[c"__clock_getres_time64", c"__gettimeofday_time64"],
    ),
];

/// The names this target exports, or with `all_targets` the names of every target.
pub fn names(all_targets: bool) -> impl Iterator<Item = &'static CStr> {
    EXPORTS
        .iter()
        .filter(move |(on, _)| all_targets || on.here())
        .flat_map(|(_, names)| names.iter().copied())
}
