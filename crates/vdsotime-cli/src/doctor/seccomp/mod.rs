//! The proof of a path: a forked child forbids the time system calls with a seccomp
//! filter that answers them with [`PROBE_ERRNO`], then calls each vDSO entry once. A
//! call that returns that errno entered the kernel (the vDSO fell back to the system
//! call); any other answer came from user space. Timing can only suggest this; a noisy
//! virtual machine can make a served call look slow, or a fallback look fast.
//!
//! The child is forked, not spawned, so it is the same process image with the same
//! vDSO (a re-executed program under valgrind would run natively and see one). It
//! does nothing that allocates or locks between the fork and its exit.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use serde::{Deserialize, Serialize};
use vdsotime::{Function, GrndFlags, Path};

use crate::measure::paths;
use crate::names;
use filter::Filter;

/// The errno the filter answers with: no kernel returns it, so it can only mean "the
/// filter caught a system call".
pub const PROBE_ERRNO: u16 = 4000;

/// How long the parent waits for the child.
const TIMEOUT_MS: i32 = 10_000;

pub mod filter;

/// How a path was established.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Called under a seccomp filter that catches the system call: proof.
    Seccomp,
    /// Inferred from the vDSO's cost against the syscall's.
    Timing,
    /// Known without a call: there is no vDSO entry to take.
    Lookup,
}

impl Method {
    /// The name in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Seccomp => "seccomp",
            Method::Timing => "timing",
            Method::Lookup => "lookup",
        }
    }
}

/// What happened to one call under the filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Answered in user space: the filter saw no system call.
    NoSyscall,
    /// The filter's errno came back: the call entered the kernel.
    Syscall,
    /// Nothing to call: this process has no vDSO entry for it.
    NoEntry,
    /// Not called: the filter could not be installed.
    NotProbed,
}

/// One function and clock, as probed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeCall {
    /// `clock_gettime`, `clock_getres`, `gettimeofday`, `time`, `getcpu`, `getrandom`.
    pub function: String,
    /// `CLOCK_MONOTONIC`, ... for the functions that take a clock.
    pub clock: Option<String>,
    /// vdsotime's route for it: `symbol@version`, `rseq area (glibc)` or `syscall`.
    pub route: String,
    /// What the filter saw.
    pub outcome: Outcome,
}

/// The probe's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeReport {
    /// `seccomp` when the filter ran, `timing` when it could not.
    pub method: Method,
    /// Why the filter could not run.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub unavailable: Option<String>,
    /// Every call, in the order of [`rows`].
    pub calls: Vec<ProbeCall>,
}

/// What the probe calls: the doctor's timed rows (with the enabled auxiliary clocks), then
/// clock_getres of the clocks the vDSO serves and getrandom.
pub fn rows() -> Vec<Function> {
    let mut v = paths::doctor_rows();
    v.extend(paths::VDSO_CLOCKS.map(Function::ClockGetres));
    v.push(Function::Getrandom);
    v
}

/// How the child calls one row: the vDSO symbol itself where its C signature is
/// plain, else vdsotime's function (whose vDSO route returns the vDSO's own errors).
#[derive(Clone, Copy, Debug)]
enum Call {
    None,
    RawGettime(vdsotime::raw::ClockGettimeFn, i32),
    RawGetres(vdsotime::raw::ClockGetresFn, i32),
    RawGettimeofday(vdsotime::raw::GettimeofdayFn),
    RawTime(vdsotime::raw::TimeFn),
    RawGetcpu(vdsotime::raw::GetcpuFn),
    Lib(Function),
}

/// The vDSO's own entry is called even where vdsotime takes the syscall (CPU-time
/// clocks): it shows what the vDSO does with the call.
fn plan(f: Function, route: Path) -> Call {
    let raw = match f {
        Function::ClockGettime(c) => {
            vdsotime::raw::clock_gettime().map(|g| Call::RawGettime(g, c.as_raw()))
        }
        Function::ClockGetres(c) => {
            vdsotime::raw::clock_getres().map(|g| Call::RawGetres(g, c.as_raw()))
        }
        Function::Gettimeofday => vdsotime::raw::gettimeofday().map(Call::RawGettimeofday),
        Function::Time => vdsotime::raw::time().map(Call::RawTime),
        // The rseq area is what vdsotime reads: prove that, not the vDSO's getcpu.
        Function::Getcpu if route == Path::Rseq => None,
        Function::Getcpu => vdsotime::raw::getcpu().map(Call::RawGetcpu),
        Function::Getrandom => None,
    };
    match raw {
        Some(c) => c,
        None if route == Path::Syscall => Call::None,
        None => Call::Lib(f),
    }
}

const ENTERED: i32 = 1;
const SERVED: i32 = 0;
const NO_ENTRY: i32 = 2;

/// Makes one call; in the child, so no allocation.
fn call(c: Call, rng: &mut vdsotime::random::State) -> i32 {
    let e = -i32::from(PROBE_ERRNO);
    let entered = |r: bool| if r { ENTERED } else { SERVED };
    let lib_err = |r: Option<vdsotime::Errno>| entered(r.map(|e| e.raw()) == Some(-e));
    let mut ts = vdsotime::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    match c {
        Call::None => NO_ENTRY,
        Call::RawGettime(g, id) => {
            // SAFETY: (each raw call) an entry point the library resolved from this
            // process's vDSO, called with its C signature and writable outputs.
            entered(unsafe { g(id, &mut ts) } == e)
        }
        Call::RawGetres(g, id) => {
            // SAFETY: as above.
            entered(unsafe { g(id, &mut ts) } == e)
        }
        Call::RawGettimeofday(g) => {
            let mut tv = vdsotime::raw::KernelTimeval::default();
            // SAFETY: as above; a null timezone is allowed.
            entered(unsafe { g(&mut tv, std::ptr::null_mut()) } == e)
        }
        Call::RawTime(g) => {
            // SAFETY: as above; a null pointer asks for the return value only.
            let t = unsafe { g(std::ptr::null_mut()) };
            entered(i128::from(t) == i128::from(e))
        }
        Call::RawGetcpu(g) => {
            let (mut cpu, mut node) = (0u32, 0u32);
            // SAFETY: as above; the cache argument is unused by every kernel.
            entered(unsafe { g(&mut cpu, &mut node, std::ptr::null_mut()) } == e)
        }
        Call::Lib(Function::ClockGettime(c)) => lib_err(vdsotime::clock_gettime(c).err()),
        Call::Lib(Function::ClockGetres(c)) => lib_err(vdsotime::clock_getres(c).err()),
        Call::Lib(Function::Gettimeofday) => lib_err(vdsotime::gettimeofday().err()),
        // time() has no errno: -1 only if its system call failed, here by the filter.
        Call::Lib(Function::Time) => entered(vdsotime::time() == -1),
        Call::Lib(Function::Getcpu) => lib_err(vdsotime::getcpu().err()),
        Call::Lib(Function::Getrandom) => {
            if !rng.is_vdso() {
                return NO_ENTRY;
            }
            let mut buf = [0u8; 16];
            lib_err(rng.getrandom(&mut buf, GrndFlags::NONE).err())
        }
    }
}

/// Most rows the child reports.
const MAX_ROWS: usize = 32;
/// The child's report: status, errno, then one result per row.
type Report = [i32; 2 + MAX_ROWS];

/// The child: warm every call up, install the filter, call each once more, report
/// through `fd`, exit. Never returns.
fn child(calls: &[Call], filter: &Filter, fd: i32) -> ! {
    let mut out: Report = [0; 2 + MAX_ROWS];
    // A state made here, keyed by one call before the filter (its first call always
    // asks the kernel for a key).
    let mut rng = vdsotime::random::State::new();
    for &c in calls {
        call(c, &mut rng);
    }
    match filter.install() {
        Ok(()) => {
            for (slot, &c) in out[2..].iter_mut().zip(calls) {
                *slot = call(c, &mut rng);
            }
        }
        Err(e) => (out[0], out[1]) = e.encode(),
    }
    // SAFETY: `out` is readable for its size; `fd` is the pipe's write end.
    unsafe { libc::write(fd, out.as_ptr().cast(), std::mem::size_of::<Report>()) };
    // SAFETY: ends the child without running the parent's exit handlers.
    unsafe { libc::_exit(0) }
}

/// Runs the child and waits for its report.
fn run_child(calls: &[Call], filter: &Filter) -> Result<Report, String> {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` is writable for two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!("pipe: {}", io::Error::last_os_error()));
    }
    // SAFETY: both descriptors are fresh and ours.
    let (rd, wr) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: the child runs only `child`, which neither allocates nor locks.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", io::Error::last_os_error()));
    }
    if pid == 0 {
        child(calls, filter, wr.as_raw_fd());
    }
    drop(wr);
    let report = read_report(&rd);
    let mut status = 0;
    if report.is_err() {
        // SAFETY: `pid` is our child.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    // SAFETY: `pid` is our child; `status` is writable.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    if libc::WIFSIGNALED(status) {
        return Err(format!(
            "the probe process was killed by signal {}",
            libc::WTERMSIG(status)
        ));
    }
    report
}

fn read_report(rd: &OwnedFd) -> Result<Report, String> {
    let mut out: Report = [0; 2 + MAX_ROWS];
    let want = std::mem::size_of::<Report>();
    let mut got = 0usize;
    while got < want {
        let mut pfd = libc::pollfd {
            fd: rd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        if unsafe { libc::poll(&mut pfd, 1, TIMEOUT_MS) } <= 0 {
            return Err("the probe process did not answer".into());
        }
        // SAFETY: reads into the unfilled tail of `out`.
        let n = unsafe {
            libc::read(
                rd.as_raw_fd(),
                out.as_mut_ptr().cast::<u8>().add(got).cast(),
                want - got,
            )
        };
        if n <= 0 {
            return Err("the probe process ended without a report".into());
        }
        got += n as usize;
    }
    Ok(out)
}

/// Probes every row of [`rows`] in a child process.
pub fn collect() -> ProbeReport {
    probe(&rows())
}

/// Probes `functions` (at most 32) in a child process.
pub fn probe(functions: &[Function]) -> ProbeReport {
    let functions = &functions[..functions.len().min(MAX_ROWS)];
    let routes: Vec<Path> = functions.iter().map(|&f| vdsotime::path(f)).collect();
    let calls: Vec<Call> = functions
        .iter()
        .zip(&routes)
        .map(|(&f, &r)| plan(f, r))
        .collect();
    let probed = |outcomes: &dyn Fn(usize) -> Outcome| -> Vec<ProbeCall> {
        functions
            .iter()
            .zip(&routes)
            .enumerate()
            .map(|(i, (&f, r))| ProbeCall {
                function: names::function_name(f).to_string(),
                clock: names::function_clock(f).map(names::clock_full),
                route: r.to_string(),
                outcome: outcomes(i),
            })
            .collect()
    };
    let refused = |why: String| ProbeReport {
        method: Method::Timing,
        unavailable: Some(why),
        calls: probed(&|i| {
            if matches!(calls[i], Call::None) {
                Outcome::NoEntry
            } else {
                Outcome::NotProbed
            }
        }),
    };
    if vdsotime::vdso().is_none() {
        // Nothing to prove, and some emulators (valgrind) do not know seccomp at all.
        return refused("this process has no vDSO".into());
    }
    let filter = match Filter::new(&filter::time_syscalls(), PROBE_ERRNO) {
        Ok(f) => f,
        Err(e) => return refused(e.to_string()),
    };
    let report = match run_child(&calls, &filter) {
        Ok(r) => r,
        Err(e) => return refused(e),
    };
    if report[0] != 0 {
        return refused(filter::Refused::decode(report[0], report[1]).to_string());
    }
    ProbeReport {
        method: Method::Seccomp,
        unavailable: None,
        calls: probed(&|i| match report[2 + i] {
            SERVED => Outcome::NoSyscall,
            ENTERED => Outcome::Syscall,
            _ => Outcome::NoEntry,
        }),
    }
}

#[cfg(test)]
mod tests;
