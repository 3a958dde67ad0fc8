//! The live view in a terminal: the table redrawn every second with the last second's
//! rates, until `q` (or Ctrl-C). The terminal is put in non-canonical mode without echo
//! for the keys, and restored on the way out.

use std::io::Write;
use std::time::{Duration, Instant};

use crate::top::host::Host;
use crate::top::render::{self, Document};
use crate::top::source::Chosen;
use crate::top::tally::Tally;

/// Standard input in non-canonical mode without echo, restored when dropped.
struct Keys {
    saved: Option<libc::termios>,
}

impl Keys {
    fn new() -> Keys {
        // SAFETY: a zeroed termios is a valid out-parameter for tcgetattr.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: fd 0 and a valid pointer.
        if unsafe { libc::tcgetattr(0, &mut t) } != 0 {
            return Keys { saved: None };
        }
        let saved = t;
        t.c_lflag &= !(libc::ICANON | libc::ECHO);
        t.c_cc[libc::VMIN] = 0;
        t.c_cc[libc::VTIME] = 0;
        // SAFETY: fd 0 and a valid termios.
        unsafe { libc::tcsetattr(0, libc::TCSANOW, &t) };
        Keys { saved: Some(saved) }
    }

    /// Whether `q` was typed, waiting at most `timeout` for a key.
    fn quit(&self, timeout: Duration) -> bool {
        let mut fds = libc::pollfd {
            fd: 0,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        // SAFETY: one valid pollfd.
        if unsafe { libc::poll(&mut fds, 1, ms) } <= 0 {
            return false;
        }
        let mut buf = [0u8; 16];
        // SAFETY: reads into a buffer of that length.
        let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
        let n = usize::try_from(n).unwrap_or(0);
        buf[..n].iter().any(|&b| b == b'q' || b == b'Q')
    }
}

impl Drop for Keys {
    fn drop(&mut self) {
        if let Some(t) = &self.saved {
            // SAFETY: fd 0 and the termios read at the start.
            unsafe { libc::tcsetattr(0, libc::TCSANOW, t) };
        }
    }
}

/// Table rows that fit the terminal beside the totals, the fixes and the footer.
fn table_rows() -> usize {
    // SAFETY: a zeroed winsize is a valid out-parameter for TIOCGWINSZ on fd 1.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: fd 1 and a valid pointer of the size the request writes.
    let ok = unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) } == 0;
    let height = if ok && ws.ws_row > 0 {
        usize::from(ws.ws_row)
    } else {
        24
    };
    height.saturating_sub(14).max(3)
}

/// Redraws every second until `q`.
pub fn run(chosen: &mut Chosen, tally: &mut Tally, host: &Host) {
    crate::top::stop::catch();
    let keys = Keys::new();
    let mut start = Instant::now();
    let mut out = std::io::stdout();
    loop {
        if keys.quit(chosen.source.every()) || crate::top::stop::interrupted() {
            break;
        }
        chosen.source.read(tally);
        let seconds = start.elapsed().as_secs_f64();
        if seconds < 1.0 {
            continue;
        }
        let rows = tally.rows(seconds, host);
        let doc = Document::new(&rows, seconds, tally, chosen, host);
        let screen = render::text(&doc, table_rows());
        let _ = write!(
            out,
            "\x1b[H\x1b[2J{screen}\nq quits; refreshed every second.\n"
        );
        let _ = out.flush();
        tally.reset();
        start = Instant::now();
    }
}
