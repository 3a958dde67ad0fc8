//! The `tracepoint` backend: one program on the classic `raw_syscalls:sys_enter`
//! tracepoint (bpf/count.bpf.c), which every system call enters; it tests the number
//! first and counts only the time calls. The same object serves every 64-bit
//! architecture of a byte order: the record's layout is checked in tracefs.

use std::os::fd::{AsFd, AsRawFd};

use aya::programs::TracePoint;

use super::{parse, plain, unavailable, Aligned, Counter, Settings, Unavailable};
use crate::top::tracefs::SysEnter;

#[cfg(target_endian = "little")]
static OBJECT: &Aligned<[u8]> = &Aligned(*include_bytes!("../../../bpf/count.bpfel.o"));
#[cfg(target_endian = "big")]
static OBJECT: &Aligned<[u8]> = &Aligned(*include_bytes!("../../../bpf/count.bpfeb.o"));

impl Counter {
    /// Loads the tracepoint program for the counted `numbers` (those in `clock_numbers`
    /// take a clock id first), `only` one process if given, and attaches it.
    pub fn tracepoint(
        layout: &SysEnter,
        numbers: &[i64],
        clock_numbers: &[i64],
        only: Option<u32>,
    ) -> Result<Counter, Unavailable> {
        if layout.nr != (8, 8) || layout.arg0 != (16, 8) {
            return Err(plain(format!(
                "the tracepoint's record has the system call number at {:?} and the \
                 arguments at {:?} (offset, size), not the 64-bit layout the program reads",
                layout.nr, layout.arg0
            )));
        }
        let mut settings = Settings::new(only);
        for (slot, &nr) in numbers.iter().enumerate() {
            settings.set(slot, nr, clock_numbers.contains(&nr))?;
        }
        let mut ebpf = parse(&OBJECT.0, &settings, None)?;
        let program: &mut TracePoint = ebpf
            .program_mut("count_sys_enter")
            .ok_or_else(|| plain("the BPF object has no count_sys_enter".into()))?
            .try_into()
            .map_err(|e| unavailable("the BPF counter", &e))?;
        program
            .load()
            .map_err(|e| unavailable("verifying the BPF counter", &e))?;
        program
            .attach("raw_syscalls", "sys_enter")
            .map_err(|e| unavailable("attaching to raw_syscalls:sys_enter", &e))?;
        let fds = program.fd().ok().map(|fd| fd.as_fd().as_raw_fd());
        Counter::holding(ebpf, fds.into_iter().collect())
    }
}
