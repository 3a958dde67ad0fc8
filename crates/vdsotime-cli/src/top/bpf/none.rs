//! The BPF backends of a 32-bit build: there are none (the loader's bindings and the
//! registers both programs read are 64-bit), so
//! `--backend auto` counts with perf and says why, and `--backend fentry` or
//! `tracepoint` is refused with that reason.

use std::time::Duration;

use crate::top::tally::Tally;

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

/// Why this build cannot count with BPF.
fn none() -> Unavailable {
    Unavailable {
        reason: "this 32-bit build of vdsotime has no BPF backend".into(),
        denied: false,
    }
}

impl Counter {
    /// Always the reason this build has no BPF backend.
    pub fn tracepoint(
        _numbers: &[i64],
        _clock_numbers: &[i64],
        _only: Option<u32>,
    ) -> Result<Counter, Unavailable> {
        Err(none())
    }

    /// Always the reason this build has no BPF backend.
    pub fn fentry(_only: Option<u32>) -> Result<Counter, Unavailable> {
        Err(none())
    }

    /// Never called: no counter exists.
    pub fn read(&mut self, _tally: &mut Tally) {
        match *self {}
    }
}
