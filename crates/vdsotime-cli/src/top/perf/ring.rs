//! The ring buffer of one CPU's event: mapped after the event is opened, read on a
//! timer between the kernel's head and this reader's tail, each record parsed into an
//! [`Event`]. Sized in bytes, so that a host with large pages (64 KiB on ppc64le) maps
//! no more than one with 4 KiB pages.

use std::os::fd::{AsRawFd, OwnedFd};

use crate::top::tracefs::{SysEnter, TraceError};

const PERF_RECORD_LOST: u32 = 2;
const PERF_RECORD_COMM: u32 = 3;
const PERF_RECORD_SAMPLE: u32 = 9;
/// Bytes of each ring buffer's data area: about 23,000 samples of 88 bytes (x86_64's
/// `sys_enter` record with its header). Rounded up to a power of two of pages, as the
/// kernel asks, where a page is larger.
const DATA_BYTES: usize = 2 << 20;

/// Data pages of a buffer of [`DATA_BYTES`] with pages of `page` bytes: a power of two.
pub fn data_pages(page: usize) -> usize {
    (DATA_BYTES / page.max(1)).max(1).next_power_of_two()
}

/// What the ring buffers carried.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A time system call entered: process, thread, number and first argument.
    Call {
        pid: u32,
        tid: u32,
        nr: i64,
        arg0: u64,
    },
    /// A process took a new name (exec): its pid and name.
    Comm { pid: u32, comm: String },
    /// Samples the kernel dropped because a buffer was full.
    Lost(u64),
}

/// One CPU's event and its ring buffer.
pub struct Ring {
    /// The event: open as long as its mapping is read.
    pub fd: OwnedFd,
    base: *mut u8,
    len: usize,
    page: usize,
    /// Bytes of the data area after the metadata page.
    size: usize,
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: `base`/`len` are the mapping made in `Ring::map`, unmapped once, here.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

impl Ring {
    /// Maps the ring buffer of the event `fd`, opened on `cpu`.
    pub fn map(fd: OwnedFd, cpu: i32) -> Result<Ring, TraceError> {
        // SAFETY: sysconf has no memory effects.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        let size = page * data_pages(page);
        let len = page + size;
        // SAFETY: a shared read-write mapping of the event's ring buffer, as
        // perf_event_open(2) describes; checked for MAP_FAILED below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            let e = std::io::Error::last_os_error();
            return Err(TraceError::Missing(format!(
                "mapping the ring buffer of CPU {cpu}: {e}"
            )));
        }
        Ok(Ring {
            fd,
            base: base.cast(),
            len,
            page,
            size,
        })
    }

    /// Takes every record written since the last call, in order.
    pub fn drain(&self, layout: &SysEnter, out: &mut Vec<Event>) {
        let size = self.size;
        // SAFETY: the metadata page's data_head/data_tail (offsets 1024 and 1032) lie in
        // the mapping; head is read with acquire ordering after the kernel's writes, as
        // perf_event_open(2) asks, and tail is only written by this reader.
        let (head_ptr, tail_ptr) = unsafe {
            (
                &*(self.base.add(1024) as *const std::sync::atomic::AtomicU64),
                &*(self.base.add(1032) as *const std::sync::atomic::AtomicU64),
            )
        };
        let head = head_ptr.load(std::sync::atomic::Ordering::Acquire);
        let mut tail = tail_ptr.load(std::sync::atomic::Ordering::Relaxed);
        // The data area follows the metadata page and is `size` bytes long. Only the bytes
        // between tail and head are read: the buffer is mapped writable, so the kernel
        // does not overwrite them before data_tail moves past them (it drops samples
        // instead), while it may be writing the rest of the area.
        let data = self.base.wrapping_add(self.page);
        // SAFETY: `i < size`, inside the data area, within [tail, head) (see above).
        let byte = |i: usize| unsafe { data.add(i % size).read() };
        let mut wrapped = Vec::new();
        while tail < head {
            let at = (tail % size as u64) as usize;
            let len = usize::from(u16::from_ne_bytes([byte(at + 6), byte(at + 7)]));
            let unread = usize::try_from(head - tail).unwrap_or(usize::MAX);
            if len < 8 || len > unread {
                break;
            }
            // A record is read where it lies, unless it wraps around the buffer's end.
            let record = if at + len <= size {
                // SAFETY: `len` bytes from `at`, inside the data area and within
                // [tail, head), which the kernel does not write until tail moves.
                unsafe { std::slice::from_raw_parts(data.add(at), len) }
            } else {
                wrapped.clear();
                wrapped.extend((0..len).map(|i| byte(at + i)));
                &wrapped[..]
            };
            if let Some(e) = parse(record, layout) {
                out.push(e);
            }
            tail += len as u64;
        }
        tail_ptr.store(head, std::sync::atomic::Ordering::Release);
    }
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn int_at(b: &[u8], at: usize, size: usize) -> Option<u64> {
    match size {
        4 => u32_at(b, at).map(u64::from),
        8 => Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?)),
        _ => None,
    }
}

/// One record (header included, already unwrapped from the ring) as an event.
pub fn parse(record: &[u8], layout: &SysEnter) -> Option<Event> {
    let kind = u32_at(record, 0)?;
    let body = record.get(8..)?;
    match kind {
        PERF_RECORD_SAMPLE => {
            let (pid, tid, size) = (u32_at(body, 0)?, u32_at(body, 4)?, u32_at(body, 8)?);
            let raw = body.get(12..12 + size as usize)?;
            let nr = int_at(raw, layout.nr.0, layout.nr.1)?;
            // A 4-byte `long` is sign-extended: the id is signed.
            let nr = if layout.nr.1 == 4 {
                i64::from(nr as u32 as i32)
            } else {
                nr as i64
            };
            let arg0 = int_at(raw, layout.arg0.0, layout.arg0.1)?;
            Some(Event::Call { pid, tid, nr, arg0 })
        }
        PERF_RECORD_COMM => {
            let pid = u32_at(body, 0)?;
            let name = body.get(8..)?;
            let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            let comm = String::from_utf8_lossy(&name[..end]).into_owned();
            Some(Event::Comm { pid, comm })
        }
        PERF_RECORD_LOST => Some(Event::Lost(int_at(body, 8, 8)?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAYOUT: SysEnter = SysEnter {
        id: 1,
        nr: (8, 8),
        arg0: (16, 8),
    };

    #[test]
    fn a_sample_is_read_back() {
        let mut raw = vec![0u8; 64];
        raw[8..16].copy_from_slice(&228i64.to_ne_bytes());
        raw[16..24].copy_from_slice(&2u64.to_ne_bytes());
        let mut rec = Vec::new();
        rec.extend(PERF_RECORD_SAMPLE.to_ne_bytes());
        rec.extend(0u16.to_ne_bytes());
        rec.extend(((8 + 12 + raw.len()) as u16).to_ne_bytes());
        rec.extend(7u32.to_ne_bytes());
        rec.extend(8u32.to_ne_bytes());
        rec.extend((raw.len() as u32).to_ne_bytes());
        rec.extend(&raw);
        let want = Event::Call {
            pid: 7,
            tid: 8,
            nr: 228,
            arg0: 2,
        };
        assert_eq!(parse(&rec, &LAYOUT), Some(want));
        assert_eq!(parse(&rec[..20], &LAYOUT), None, "a cut record is refused");
    }

    #[test]
    fn buffers_are_sized_in_bytes_whatever_the_page() {
        assert_eq!(data_pages(4096) * 4096, DATA_BYTES);
        assert_eq!(data_pages(16 << 10) * (16 << 10), DATA_BYTES);
        assert_eq!(data_pages(64 << 10) * (64 << 10), DATA_BYTES);
        assert_eq!(data_pages(4 << 20), 1, "one page when a page is larger");
        assert!(data_pages(12288).is_power_of_two());
    }
}
