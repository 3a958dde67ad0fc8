//! One line of the report, formatted on the stack and written in one write(2), so lines
//! from several processes appending to one file never interleave.

use core::ffi::{c_int, c_void, CStr};
use core::fmt::{self, Write};

/// A line being formatted for the file descriptor `fd`.
pub struct Line {
    fd: c_int,
    buf: [u8; 2048],
    len: usize,
}

impl Line {
    /// A line for `fd` that starts with `vdsotime-preload[PID]: `.
    pub fn new(fd: c_int) -> Line {
        let mut line = Line {
            fd,
            buf: [0; 2048],
            len: 0,
        };
        // SAFETY: getpid has no preconditions.
        let pid = unsafe { libc::getpid() };
        let _ = write!(line, "vdsotime-preload[{pid}]: ");
        line
    }

    /// Writes the line and a newline, retrying short writes; errors are dropped.
    pub fn emit(mut self) {
        if self.len == self.buf.len() {
            self.len -= 1;
        }
        let _ = self.write_str("\n");
        let mut rest: &[u8] = self.buf.get(..self.len).unwrap_or(&[]);
        while !rest.is_empty() {
            // SAFETY: rest is a live buffer of rest.len() bytes.
            let n = unsafe { libc::write(self.fd, rest.as_ptr().cast::<c_void>(), rest.len()) };
            match usize::try_from(n) {
                Ok(n) if n > 0 => rest = rest.get(n..).unwrap_or(&[]),
                _ => return,
            }
        }
    }
}

impl Write for Line {
    /// Appends what fits; a too-long line is truncated, never an error or a panic.
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for (slot, byte) in self.buf.iter_mut().skip(self.len).zip(s.bytes()) {
            *slot = byte;
            self.len += 1;
        }
        Ok(())
    }
}

/// Displays optional bytes (a C string's, a path's), lossily, without allocating.
pub struct Shown<'a>(pub Option<&'a [u8]>);

impl<'a> Shown<'a> {
    /// A C string's bytes.
    pub fn c(s: Option<&'a CStr>) -> Shown<'a> {
        Shown(s.map(CStr::to_bytes))
    }
}

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => f.write_str("(unknown)"),
            Some(s) => {
                for chunk in s.utf8_chunks() {
                    f.write_str(chunk.valid())?;
                    if !chunk.invalid().is_empty() {
                        f.write_str("\u{fffd}")?;
                    }
                }
                Ok(())
            }
        }
    }
}
