//! The `tracepoint` backend: one program on the raw tracepoint `sys_enter`
//! (bpf/sys_enter.bpf.c), which every system call enters; it tests the number first
//! and counts only the time calls. A raw tracepoint's program is handed the task's
//! saved registers rather than a record built for it, so the program reads the clock
//! id from them, and there is one object per architecture, as for fentry.

use std::os::fd::{AsFd, AsRawFd};

use aya::programs::RawTracePoint;

use super::{parse, plain, unavailable, Aligned, Counter, Settings, Unavailable};

arch_object!("sys_enter");

impl Counter {
    /// Loads the tracepoint program for the counted `numbers` (those in `clock_numbers`
    /// take a clock id first), `only` one process if given, and attaches it.
    pub fn tracepoint(
        numbers: &[i64],
        clock_numbers: &[i64],
        only: Option<u32>,
    ) -> Result<Counter, Unavailable> {
        let object = OBJECT.ok_or_else(|| {
            plain(format!(
                "this build has no tracepoint program for {}",
                std::env::consts::ARCH
            ))
        })?;
        let mut settings = Settings::new(only);
        for (slot, &nr) in numbers.iter().enumerate() {
            settings.set(slot, nr, clock_numbers.contains(&nr))?;
        }
        let mut ebpf = parse(&object.0, &settings, None)?;
        let program: &mut RawTracePoint = ebpf
            .program_mut("count_sys_enter")
            .ok_or_else(|| plain("the BPF object has no count_sys_enter".into()))?
            .try_into()
            .map_err(|e| unavailable("the BPF counter", &e))?;
        program
            .load()
            .map_err(|e| unavailable("verifying the BPF counter", &e))?;
        program
            .attach("sys_enter")
            .map_err(|e| unavailable("attaching to the raw tracepoint sys_enter", &e))?;
        let fds = program.fd().ok().map(|fd| fd.as_fd().as_raw_fd());
        Counter::holding(ebpf, fds.into_iter().collect())
    }
}
