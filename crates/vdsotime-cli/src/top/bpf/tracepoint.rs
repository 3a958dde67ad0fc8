//! The `tracepoint` backend: one program on the classic `raw_syscalls:sys_enter`
//! tracepoint (bpf/count.bpf.c), which every system call enters; it tests the number
//! first and counts only the time calls. The same object serves every 64-bit
//! architecture of a byte order: the record's layout is checked in tracefs.

use std::os::fd::{AsFd, AsRawFd};

use aya::programs::{RawTracePoint, TracePoint};

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

static RAW: &Aligned<[u8]> = &Aligned(*include_bytes!("../../../bpf/sys_enter.x86_64.o"));
static CALLS: &Aligned<[u8]> = &Aligned(*include_bytes!("../../../bpf/syscalls.bpfel.o"));

impl Counter {
    /// Candidate: raw tracepoint.
    pub fn raw_tracepoint(
        numbers: &[i64],
        clock_numbers: &[i64],
        only: Option<u32>,
    ) -> Result<Counter, Unavailable> {
        let mut settings = Settings::new(only);
        for (slot, &nr) in numbers.iter().enumerate() {
            settings.set(slot, nr, clock_numbers.contains(&nr))?;
        }
        let mut ebpf = parse(&RAW.0, &settings, None)?;
        let program: &mut RawTracePoint = ebpf
            .program_mut("count_sys_enter")
            .ok_or_else(|| plain("no count_sys_enter".into()))?
            .try_into()
            .map_err(|e| unavailable("the BPF counter", &e))?;
        program
            .load()
            .map_err(|e| unavailable("verifying the BPF counter", &e))?;
        program
            .attach("sys_enter")
            .map_err(|e| unavailable("attaching to sys_enter", &e))?;
        let fds = program.fd().ok().map(|fd| fd.as_fd().as_raw_fd());
        Counter::holding(ebpf, fds.into_iter().collect())
    }

    /// Candidate: raw tracepoint with a bitmap test.
    pub fn raw_tracepoint_bits(only: Option<u32>) -> Result<Counter, Unavailable> {
        let numbers = crate::top::syscalls::numbers();
        let mut settings = Settings::new(only);
        let mut bits = [0u64; 8];
        for (slot, &nr) in numbers.iter().enumerate() {
            settings.set(slot, nr, crate::top::syscalls::clock_numbers().contains(&nr))?;
            bits[(nr as usize) >> 6] |= 1 << (nr & 63);
        }
        let (dev, ino) = super::pid_namespace()?;
        let one: u32 = 1;
        let mut ebpf = aya::EbpfLoader::new()
            .override_global("numbers", &settings.slots, true)
            .override_global("takes_clock", &settings.takes_clock, true)
            .override_global("pidns_dev", &dev, true)
            .override_global("pidns_ino", &ino, true)
            .override_global("only_tgid", &settings.only, true)
            .override_global("use_bits", &one, true)
            .override_global("bits", &bits, true)
            .load(&RAW.0)
            .map_err(|e| unavailable("loading", &e))?;
        let program: &mut RawTracePoint = ebpf
            .program_mut("count_sys_enter")
            .ok_or_else(|| plain("no count_sys_enter".into()))?
            .try_into()
            .map_err(|e| unavailable("the BPF counter", &e))?;
        program.load().map_err(|e| unavailable("verifying", &e))?;
        program.attach("sys_enter").map_err(|e| unavailable("attaching", &e))?;
        let fds = program.fd().ok().map(|fd| fd.as_fd().as_raw_fd());
        Counter::holding(ebpf, fds.into_iter().collect())
    }

    /// Candidate: per-call tracepoints plus a compat-only raw tracepoint.
    pub fn call_tracepoints_compat(only: Option<u32>) -> Result<Counter, Unavailable> {
        let numbers = crate::top::syscalls::numbers();
        let mut settings = Settings::new(only);
        for (slot, &nr) in numbers.iter().enumerate() {
            settings.set(slot, nr, crate::top::syscalls::clock_numbers().contains(&nr))?;
        }
        let (dev, ino) = super::pid_namespace()?;
        let one: u32 = 1;
        let mut ebpf = aya::EbpfLoader::new()
            .override_global("numbers", &settings.slots, true)
            .override_global("takes_clock", &settings.takes_clock, true)
            .override_global("pidns_dev", &dev, true)
            .override_global("pidns_ino", &ino, true)
            .override_global("only_tgid", &settings.only, true)
            .override_global("compat_only", &one, true)
            .load(&RAW.0)
            .map_err(|e| unavailable("loading", &e))?;
        let program: &mut RawTracePoint = ebpf
            .program_mut("count_sys_enter")
            .ok_or_else(|| plain("no count_sys_enter".into()))?
            .try_into()
            .map_err(|e| unavailable("the BPF counter", &e))?;
        program.load().map_err(|e| unavailable("verifying", &e))?;
        program.attach("sys_enter").map_err(|e| unavailable("attaching", &e))?;
        std::mem::forget(ebpf);
        Counter::call_tracepoints(only)
    }

    /// Candidate: per-call tracepoints.
    pub fn call_tracepoints(only: Option<u32>) -> Result<Counter, Unavailable> {
        use crate::top::syscalls::{self, Abi};
        let table = syscalls::table(Abi::Native);
        let mut settings = Settings::new(only);
        for (slot, &(nr, call)) in table.iter().enumerate() {
            settings.set(slot, nr, call.takes_clock())?;
        }
        let mut ebpf = parse(&CALLS.0, &settings, None)?;
        let program: &mut TracePoint = ebpf
            .program_mut("count_syscall")
            .ok_or_else(|| plain("no count_syscall".into()))?
            .try_into()
            .map_err(|e| unavailable("the BPF counter", &e))?;
        program
            .load()
            .map_err(|e| unavailable("verifying the BPF counter", &e))?;
        for (_, call) in &table {
            let name = format!("sys_enter_{}", call.name());
            program
                .attach("syscalls", &name)
                .map_err(|e| unavailable(&format!("attaching to {name}"), &e))?;
        }
        let fds = program.fd().ok().map(|fd| fd.as_fd().as_raw_fd());
        Counter::holding(ebpf, fds.into_iter().collect())
    }
}
