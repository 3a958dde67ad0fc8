//! `VDSOTIME_PRELOAD_DEBUG=1`: at load time, report on stderr which of our symbols the
//! process binds here and which path (`vdsotime::path`) each function takes.
//!
//! Runs once, from the library's ELF constructor (`crate::init`), before the program's own
//! constructors and `main`. It reads the environment from the C library's `environ`, formats
//! into a stack buffer and writes with write(2): no allocation. `dlsym`/`dladdr` are used
//! here only, never on the clock path.

use core::ffi::{c_char, c_void, CStr};
use core::fmt::{self, Write};

use vdsotime::{ClockId, Function};

use crate::exports;

/// The variable that turns the report on (any value but empty or `0`).
const VAR: &[u8] = b"VDSOTIME_PRELOAD_DEBUG=";

/// Prints the report if `VDSOTIME_PRELOAD_DEBUG` asks for it.
///
/// # Safety
/// `envp` is NULL or the process's NULL-terminated environment array.
pub unsafe fn run(envp: *const *const c_char) {
    // SAFETY: forwarded caller contract.
    if unsafe { enabled(envp) } {
        report();
    }
}

/// Whether `VDSOTIME_PRELOAD_DEBUG` is set to something other than empty or `0`.
///
/// # Safety
/// `envp` is NULL or a NULL-terminated array of NUL-terminated strings.
unsafe fn enabled(mut envp: *const *const c_char) -> bool {
    if envp.is_null() {
        return false;
    }
    loop {
        // SAFETY: envp points into the NULL-terminated array; we stop at the NULL.
        let entry = unsafe { *envp };
        if entry.is_null() {
            return false;
        }
        // SAFETY: every entry is a NUL-terminated string that lives as long as the process.
        let bytes = unsafe { CStr::from_ptr(entry) }.to_bytes();
        if let Some(value) = bytes.strip_prefix(VAR) {
            return !value.is_empty() && value != b"0";
        }
        // SAFETY: entry was not the terminating NULL, so the next slot is in the array.
        envp = unsafe { envp.add(1) };
    }
}

/// One line of output, formatted on the stack and written to stderr in one write(2).
struct Line {
    buf: [u8; 2048],
    len: usize,
}

impl Line {
    fn new() -> Line {
        let mut line = Line {
            buf: [0; 2048],
            len: 0,
        };
        // SAFETY: getpid has no preconditions.
        let pid = unsafe { libc::getpid() };
        let _ = write!(line, "vdsotime-preload[{pid}]: ");
        line
    }

    /// Writes the line and a newline to fd 2, retrying short writes; errors are dropped.
    fn emit(mut self) {
        let _ = self.write_str("\n");
        let mut rest: &[u8] = self.buf.get(..self.len).unwrap_or(&[]);
        while !rest.is_empty() {
            // SAFETY: rest is a live buffer of rest.len() bytes.
            let n = unsafe { libc::write(2, rest.as_ptr().cast::<c_void>(), rest.len()) };
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

/// The file that defines `address`, as the dynamic linker knows it.
fn object_of(address: *const c_void) -> Option<&'static CStr> {
    // SAFETY: Dl_info is plain pointers; all-NULL is a valid value for dladdr to overwrite.
    let mut info: libc::Dl_info = unsafe { core::mem::zeroed() };
    if address.is_null() {
        return None;
    }
    // SAFETY: dladdr only looks the address up and fills info.
    let found = unsafe { libc::dladdr(address, &mut info) } != 0;
    if !found || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is a NUL-terminated name owned by the dynamic linker for as long as
    // the object stays loaded, and this object stays loaded.
    Some(unsafe { CStr::from_ptr(info.dli_fname) })
}

fn report() {
    let ours = object_of(report as *const c_void);
    let mut line = Line::new();
    let _ = write!(line, "loaded from {}", Shown(ours));
    line.emit();
    for name in exports::names(false) {
        // SAFETY: name is NUL-terminated; RTLD_DEFAULT searches the global scope.
        let target = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
        let bound = object_of(target);
        let mut line = Line::new();
        let verdict = if bound.is_some() && bound == ours {
            "bound here"
        } else {
            "NOT bound here"
        };
        let _ = write!(
            line,
            "{}: {verdict} (the process resolves it in {})",
            Shown(Some(name)),
            Shown(bound)
        );
        line.emit();
    }
    type PerClock = fn(ClockId) -> Function;
    let per_clock: [(&str, PerClock); 2] = [
        ("clock_gettime", Function::ClockGettime),
        ("clock_getres", Function::ClockGetres),
    ];
    for (name, function) in per_clock {
        let mut line = Line::new();
        let _ = write!(line, "{name}:");
        for clock in ClockId::ALL {
            let path = vdsotime::path(function(clock));
            let _ = write!(line, " {}={path}", clock.name().unwrap_or("?"));
        }
        line.emit();
    }
    for (name, f) in [
        ("gettimeofday", Function::Gettimeofday),
        ("time", Function::Time),
        ("getcpu", Function::Getcpu),
        ("getrandom, getentropy", Function::Getrandom),
    ] {
        let mut line = Line::new();
        let _ = write!(line, "{name}: {}", vdsotime::path(f));
        line.emit();
    }
    let mut line = Line::new();
    let _ = match vdsotime::rseq::area() {
        vdsotime::RseqArea::Glibc { node: true, .. } => {
            line.write_str("sched_getcpu: glibc's rseq area; getcpu: the rseq area (cpu and node)")
        }
        vdsotime::RseqArea::Glibc { node: false, .. } => write!(
            line,
            "sched_getcpu: glibc's rseq area; getcpu: {}",
            vdsotime::path(Function::Getcpu)
        ),
        vdsotime::RseqArea::Absent => {
            write!(line, "sched_getcpu: {}", vdsotime::path(Function::Getcpu))
        }
    };
    line.emit();
}

/// Displays an optional C string, lossily, without allocating.
struct Shown<'a>(Option<&'a CStr>);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => f.write_str("(unknown)"),
            Some(s) => {
                for chunk in s.to_bytes().utf8_chunks() {
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
