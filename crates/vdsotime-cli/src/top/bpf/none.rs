//! The BPF backend of a 32-bit build: there is none (its loader's bindings, and the
//! program's record layout, are 64-bit), so `--backend auto` counts with perf and says
//! why, and `--backend tracepoint` is refused with that reason.

use std::time::Duration;

use crate::top::tally::Tally;
use crate::top::tracefs::SysEnter;

/// Unused: no counter is ever opened.
pub const READ_EVERY: Duration = Duration::from_millis(100);

/// No counter can exist in this build.
pub enum Counter {}

/// Why the BPF backend could not start.
#[derive(Debug)]
pub struct Unavailable {
    /// Why.
    pub reason: String,
    /// Always false: nothing was refused.
    pub denied: bool,
}

impl Counter {
    /// Always the reason this build has no BPF backend.
    pub fn open(
        _layout: &SysEnter,
        _numbers: &[i64],
        _clock_numbers: &[i64],
        _only: Option<u32>,
    ) -> Result<Counter, Unavailable> {
        Err(Unavailable {
            reason: "this 32-bit build of vdsotime has no BPF backend".into(),
            denied: false,
        })
    }

    /// Never called: no counter exists.
    pub fn read(&mut self, _tally: &mut Tally) {
        match *self {}
    }
}
