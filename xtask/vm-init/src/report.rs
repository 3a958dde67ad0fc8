//! What the host reads on the console: every line this program writes starts with `@vm `.
//!
//! ```text
//! @vm kernel 6.1.0-50-arm64
//! @vm start LABEL
//! @vm out LABEL | a line of the program's output
//! @vm end LABEL PASS|FAIL|TIMEOUT STATUS MILLISms
//! @vm hex LABEL OFFSET HEXBYTES
//! @vm hexend LABEL LENGTH
//! @vm done
//! ```
//!
//! Each line goes out in one write, so kernel messages can only fall between lines.

use std::io::Write;

/// Prefix of every line for the host.
pub const PREFIX: &str = "@vm ";

/// Writes `@vm <text>` to the console in one write.
pub fn line(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(format!("{PREFIX}{text}\n").as_bytes());
    let _ = out.flush();
}

/// A file as `hex` lines of 48 bytes each and a closing `hexend` line.
pub fn hex(label: &str, bytes: &[u8]) {
    for (n, chunk) in bytes.chunks(48).enumerate() {
        let hex: String = chunk.iter().map(|b| format!("{b:02x}")).collect();
        line(&format!("hex {label} {} {hex}", n * 48));
    }
    line(&format!("hexend {label} {}", bytes.len()));
}
