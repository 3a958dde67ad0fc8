//! `VDSOTIME_PRELOAD_DEBUG`: at load time, report which of our symbols the process binds
//! here and which path (`vdsotime::path`) each function takes: one line per process by
//! default, the full table with `all`, on standard error or appended to a file
//! (`file:PATH`); the values are in [`setting`].
//!
//! Runs once, from the library's ELF constructor (`crate::init`), before the program's own
//! constructors and `main`. It reads the environment from the C library's `environ`, formats
//! into stack buffers and writes each line with one write(2): no allocation. `dlsym`/`dladdr`
//! are used here only, never on the clock path.

mod line;
mod setting;

use core::ffi::{c_char, c_int, c_void, CStr};
use core::fmt::Write;

use vdsotime::{ClockId, Function};

use crate::exports;
use line::{Line, Shown};
use setting::{Detail, Setting};

/// The variable that turns the report on.
const VAR: &[u8] = b"VDSOTIME_PRELOAD_DEBUG=";

/// Prints the report if `VDSOTIME_PRELOAD_DEBUG` asks for it.
///
/// # Safety
/// `envp` is NULL or the process's NULL-terminated environment array.
pub unsafe fn run(envp: *const *const c_char) {
    // SAFETY: forwarded caller contract.
    let Some(value) = (unsafe { value(envp) }) else {
        return;
    };
    let Some(setting) = setting::parse(value) else {
        return;
    };
    let fd = open(setting);
    match setting.detail {
        Detail::Line => summary(fd),
        Detail::Table => table(fd),
    }
    if fd != 2 {
        // SAFETY: fd is the descriptor open() opened for this report and nothing else uses.
        unsafe { libc::close(fd) };
    }
}

/// The value of `VDSOTIME_PRELOAD_DEBUG`, if set.
///
/// # Safety
/// `envp` is NULL or a NULL-terminated array of NUL-terminated strings that live as long as
/// the process.
unsafe fn value(mut envp: *const *const c_char) -> Option<&'static CStr> {
    if envp.is_null() {
        return None;
    }
    loop {
        // SAFETY: envp points into the NULL-terminated array; we stop at the NULL.
        let entry = unsafe { *envp };
        if entry.is_null() {
            return None;
        }
        // SAFETY: every entry is a NUL-terminated string that lives as long as the process.
        let text: &'static CStr = unsafe { CStr::from_ptr(entry) };
        if let Some(value) = text.to_bytes_with_nul().strip_prefix(VAR) {
            return CStr::from_bytes_with_nul(value).ok();
        }
        // SAFETY: entry was not the terminating NULL, so the next slot is in the array.
        envp = unsafe { envp.add(1) };
    }
}

/// The descriptor the report goes to: the setting's file, opened to append (and closed on
/// exec, so a child does not inherit it), or standard error, with a line saying why, when
/// the file cannot be opened.
fn open(setting: Setting<'_>) -> c_int {
    let Some(path) = setting.file else {
        return 2;
    };
    let flags = libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_CLOEXEC;
    // SAFETY: path is NUL-terminated; open(2) only reads it.
    let fd = unsafe { libc::open(path.as_ptr(), flags, 0o644 as libc::c_uint) };
    if fd >= 0 {
        return fd;
    }
    // SAFETY: errno is thread-local and open just set it.
    let errno = unsafe { *libc::__errno_location() };
    let mut line = Line::new(2);
    let _ = write!(
        line,
        "VDSOTIME_PRELOAD_DEBUG: cannot open \"{}\" to append (errno {errno}); reporting here",
        Shown::c(Some(path))
    );
    line.emit();
    2
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

/// This library's file.
fn ours() -> Option<&'static CStr> {
    object_of(report_marker as *const c_void)
}

/// A function of this library, to find its file with dladdr.
extern "C" fn report_marker() {}

/// Each exported name with the object the process resolves it in, and whether that is us.
fn bindings() -> impl Iterator<Item = (&'static CStr, Option<&'static CStr>, bool)> {
    let ours = ours();
    exports::names(false).map(move |name| {
        // SAFETY: name is NUL-terminated; RTLD_DEFAULT searches the global scope.
        let target = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
        let bound = object_of(target);
        (name, bound, bound.is_some() && bound == ours)
    })
}

/// The default report, one line: the program, how many of our names it binds here (and
/// which it does not), the path of `clock_gettime(CLOCK_MONOTONIC)`, where we were loaded
/// from.
fn summary(fd: c_int) {
    let mut exe = [0u8; 512];
    // SAFETY: the path is NUL-terminated; readlink writes at most exe.len() bytes to exe.
    let n = unsafe { libc::readlink(c"/proc/self/exe".as_ptr(), exe.as_mut_ptr().cast(), 512) };
    let program = usize::try_from(n).ok().and_then(|n| exe.get(..n));
    let (mut here, mut total) = (0, 0);
    for (_, _, is_here) in bindings() {
        total += 1;
        here += usize::from(is_here);
    }
    let mut line = Line::new(fd);
    let _ = write!(
        line,
        "{}: {here} of {total} names bound here",
        Shown(program)
    );
    if here < total {
        let _ = line.write_str(" (not:");
        for (name, _, _) in bindings().filter(|(_, _, is_here)| !is_here) {
            let _ = write!(line, " {}", Shown::c(Some(name)));
        }
        let _ = line.write_str(")");
    }
    let clock = ClockId::MONOTONIC;
    let _ = write!(
        line,
        "; clock_gettime {}: {}; loaded from {}; VDSOTIME_PRELOAD_DEBUG=all for every function",
        clock.name().unwrap_or("?"),
        vdsotime::path(Function::ClockGettime(clock)),
        Shown::c(ours())
    );
    line.emit();
}

/// The full report, one line each: where we were loaded from, every name's binding, every
/// function's path.
fn table(fd: c_int) {
    let mut line = Line::new(fd);
    let _ = write!(line, "loaded from {}", Shown::c(ours()));
    line.emit();
    for (name, bound, here) in bindings() {
        let mut line = Line::new(fd);
        let verdict = if here { "bound here" } else { "NOT bound here" };
        let _ = write!(
            line,
            "{}: {verdict} (the process resolves it in {})",
            Shown::c(Some(name)),
            Shown::c(bound)
        );
        line.emit();
    }
    type PerClock = fn(ClockId) -> Function;
    let per_clock: [(&str, PerClock); 2] = [
        ("clock_gettime", Function::ClockGettime),
        ("clock_getres", Function::ClockGetres),
    ];
    for (name, function) in per_clock {
        let mut line = Line::new(fd);
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
        let mut line = Line::new(fd);
        let _ = write!(line, "{name}: {}", vdsotime::path(f));
        line.emit();
    }
    let mut line = Line::new(fd);
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
