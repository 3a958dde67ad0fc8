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
    /// Standard input ended (or failed): no key can come, so waiting is sleeping.
    ended: std::cell::Cell<bool>,
}

impl Keys {
    fn new() -> Keys {
        // SAFETY: a zeroed termios is a valid out-parameter for tcgetattr.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: fd 0 and a valid pointer.
        if unsafe { libc::tcgetattr(0, &mut t) } != 0 {
            return Keys {
                saved: None,
                ended: std::cell::Cell::new(false),
            };
        }
        let saved = t;
        t.c_lflag &= !(libc::ICANON | libc::ECHO);
        t.c_cc[libc::VMIN] = 0;
        t.c_cc[libc::VTIME] = 0;
        // SAFETY: fd 0 and a valid termios.
        unsafe { libc::tcsetattr(0, libc::TCSANOW, &t) };
        Keys {
            saved: Some(saved),
            ended: std::cell::Cell::new(false),
        }
    }

    /// Whether `q` was typed, waiting at most `timeout` for a key.
    fn quit(&self, timeout: Duration) -> bool {
        if self.ended.get() {
            std::thread::sleep(timeout);
            return false;
        }
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
        // 0 at the end of input, -1 on an error: poll would say "readable" for ever.
        let Ok(n @ 1..) = usize::try_from(n) else {
            let again = matches!(
                std::io::Error::last_os_error().raw_os_error(),
                Some(libc::EINTR | libc::EAGAIN)
            );
            self.ended.set(n == 0 || !again);
            return false;
        };
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

/// Lines of the terminal the text may fill, leaving two for the footer.
fn screen_lines() -> usize {
    // SAFETY: a zeroed winsize is a valid out-parameter for TIOCGWINSZ on fd 1.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: fd 1 and a valid pointer of the size the request writes.
    let ok = unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) } == 0;
    let height = if ok && ws.ws_row > 0 {
        usize::from(ws.ws_row)
    } else {
        24
    };
    height.saturating_sub(2)
}

/// Redraws every second until `q`.
pub fn run(chosen: &mut Chosen, tally: &mut Tally, host: &Host) {
    crate::top::stop::catch();
    let keys = Keys::new();
    let mut start = Instant::now();
    let mut out = std::io::stdout();
    let _ = writeln!(
        out,
        "\x1b[H\x1b[2JMeasuring: the first second's calls appear after it. q quits."
    );
    let _ = out.flush();
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
        let screen = render::text(&doc, screen_lines());
        let _ = write!(
            out,
            "\x1b[H\x1b[2J{screen}\nq quits; refreshed every second.\n"
        );
        let _ = out.flush();
        tally.reset();
        start = Instant::now();
    }
}
