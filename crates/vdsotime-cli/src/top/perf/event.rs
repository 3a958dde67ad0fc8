//! One CPU's event: `struct perf_event_attr` for the `sys_enter` tracepoint, built for
//! this machine's byte order, opened off with `perf_event_open`, given its filter and
//! its ring buffer, then turned on.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::top::perf::ring::Ring;
use crate::top::tracefs::{SysEnter, TraceError};

const PERF_TYPE_TRACEPOINT: u32 = 2;
const PERF_SAMPLE_TID: u64 = 1 << 1;
const PERF_SAMPLE_RAW: u64 = 1 << 10;
/// The kernel's numbers of the attr bitfields used: `disabled`, `comm`, `comm_exec`.
const BIT_DISABLED: u32 = 0;
const BIT_COMM: u32 = 9;
const BIT_COMM_EXEC: u32 = 24;

/// The bits of `perf_event_attr`'s flag word for the kernel's bitfields `fields`
/// (0: `disabled`, the first declared), in a byte order (`big_endian`): the C compilers
/// of Linux allocate bitfields from the least significant bit of the word on
/// little-endian machines and from the most significant one on big-endian machines.
pub const fn flag_word(fields: &[u32], big_endian: bool) -> u64 {
    let mut word = 0u64;
    let mut i = 0;
    while i < fields.len() {
        word |= if big_endian {
            1 << (63 - fields[i])
        } else {
            1 << fields[i]
        };
        i += 1;
    }
    word
}

/// `disabled`, `comm` and `comm_exec` set, in this machine's byte order: every event
/// starts off and is turned on once its buffer is mapped.
const FLAGS: u64 = flag_word(
    &[BIT_DISABLED, BIT_COMM, BIT_COMM_EXEC],
    cfg!(target_endian = "big"),
);

/// `struct perf_event_attr` up to `PERF_ATTR_SIZE_VER5` (112 bytes).
#[repr(C)]
#[derive(Default)]
struct Attr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved: u16,
}

/// `_IOC_NONE` in an ioctl number's direction bits: 1 from bit 29 on powerpc and mips,
/// 0 elsewhere, read off `BLKFLSBUF`, which is `_IO(0x12, 97)`.
const IO_NONE: u32 = linux_raw_sys::ioctl::BLKFLSBUF - 0x1261;
/// `_IO('$', 0)` and `_IO('$', 1)`.
const PERF_EVENT_IOC_ENABLE: u32 = IO_NONE | 0x2400;
const PERF_EVENT_IOC_DISABLE: u32 = IO_NONE | 0x2401;

/// Turns the event `fd` on or off (which cannot fail on an event this process opened).
pub fn switch(fd: &OwnedFd, on: bool) {
    let request = if on {
        PERF_EVENT_IOC_ENABLE
    } else {
        PERF_EVENT_IOC_DISABLE
    };
    // SAFETY: an ioctl without an argument on an event this process opened.
    unsafe { libc::ioctl(fd.as_raw_fd(), request as _, 0) };
}

/// Sets `filter` on the event `fd` (once: the kernel refuses a second filter).
fn set_filter(fd: &OwnedFd, filter: &str) -> Result<(), TraceError> {
    let filter = std::ffi::CString::new(filter)
        .map_err(|_| TraceError::Missing("a filter with a NUL byte".into()))?;
    // SAFETY: the filter is a NUL-terminated string the kernel copies.
    let rc = unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            linux_raw_sys::ioctl::PERF_EVENT_IOC_SET_FILTER as _,
            filter.as_ptr(),
        )
    };
    if rc != 0 {
        let e = std::io::Error::last_os_error();
        return Err(TraceError::Missing(format!(
            "setting the tracepoint filter: {e}"
        )));
    }
    Ok(())
}

fn denied(what: &str, e: &std::io::Error) -> TraceError {
    TraceError::Denied(format!("{what}: {e}"))
}

/// Opens the event on `cpu` with `filter`, and maps its ring buffer; it samples nothing
/// until [`switch`]ed on.
pub fn open_cpu(cpu: i32, layout: &SysEnter, filter: &str) -> Result<Ring, TraceError> {
    let attr = Attr {
        kind: PERF_TYPE_TRACEPOINT,
        size: std::mem::size_of::<Attr>() as u32,
        config: layout.id,
        sample_period: 1,
        sample_type: PERF_SAMPLE_TID | PERF_SAMPLE_RAW,
        flags: FLAGS,
        // No wake-up per sample (an irq_work each): the buffers are read on a timer.
        wakeup_events: 0,
        ..Attr::default()
    };
    // SAFETY: `attr` is a valid perf_event_attr of the size it states; pid -1 with a CPU
    // is a system-wide event on that CPU; no group, no flags.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const Attr,
            -1 as libc::pid_t,
            cpu,
            -1 as libc::c_int,
            0 as libc::c_ulong,
        )
    };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::EACCES | libc::EPERM) => denied("perf_event_open", &e),
            _ => TraceError::Missing(format!("perf_event_open on CPU {cpu}: {e}")),
        });
    }
    // SAFETY: a new descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) };
    set_filter(&fd, filter)?;
    Ring::map(fd, cpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_attr_has_the_size_of_version_5() {
        assert_eq!(std::mem::size_of::<Attr>(), 112);
    }

    /// The kernel's layout, byte by byte in memory: on little-endian machines `disabled`
    /// is the lowest bit of the first byte, on big-endian ones (s390x) its highest.
    #[test]
    fn the_flag_word_follows_the_kernel_s_bitfields_in_both_byte_orders() {
        let fields = [BIT_DISABLED, BIT_COMM, BIT_COMM_EXEC];
        let le = flag_word(&fields, false).to_le_bytes();
        assert_eq!(le, [0x01, 0x02, 0x00, 0x01, 0, 0, 0, 0]);
        let be = flag_word(&fields, true).to_be_bytes();
        assert_eq!(be, [0x80, 0x40, 0x00, 0x80, 0, 0, 0, 0]);
        // The word as this machine stores it is the one for its own byte order.
        let native = FLAGS.to_ne_bytes();
        assert_eq!(native, if cfg!(target_endian = "big") { be } else { le });
    }
}
