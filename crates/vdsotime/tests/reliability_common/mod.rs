//! Helpers shared by the `reliability_*` integration tests: running a test in a fresh child
//! process (re-executing the test binary), the real vDSO images to mutate, and syscall
//! brackets. Not every test file uses every helper.
#![allow(dead_code)]

pub mod consistency;
pub mod elf64;
pub mod fork;
pub mod seccomp;
pub mod signals;

use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

use vdsotime::{ClockId, Timespec};

/// Environment variable that puts a re-executed test binary into child mode.
pub const CHILD_ENV: &str = "VDSOTIME_REL_CHILD";

/// Set (to "1") when the tests run under valgrind, which hides the vDSO.
pub const NO_VDSO_ENV: &str = "VDSOTIME_EXPECT_NO_VDSO";

/// The child mode this process was started in, if any.
pub fn child_mode() -> Option<String> {
    std::env::var(CHILD_ENV).ok()
}

/// True when the environment says the process has no vDSO (valgrind).
pub fn expect_no_vdso() -> bool {
    std::env::var(NO_VDSO_ENV).is_ok_and(|v| v == "1")
}

/// What a child run produced.
#[derive(Debug)]
pub struct ChildRun {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl ChildRun {
    /// Lines of stdout starting with `prefix`, with the prefix removed.
    pub fn values(&self, prefix: &str) -> Vec<String> {
        self.stdout
            .lines()
            .filter_map(|l| l.strip_prefix(prefix))
            .map(|l| l.trim().to_owned())
            .collect()
    }
}

/// Runs test `test_name` of this test binary again in a child process with `CHILD_ENV=mode`,
/// optionally under `wrapper` (e.g. `unshare ...`), killing it (with its process group)
/// after `timeout`.
///
/// Panics if the child does not finish in time: for the stress tests that means a deadlock.
pub fn run_child(test_name: &str, mode: &str, wrapper: &[&str], timeout: Duration) -> ChildRun {
    let out = child::run(
        child::command(test_name, wrapper).env(CHILD_ENV, mode),
        timeout,
    );
    ChildRun {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Nanoseconds of a timespec, wide enough for any value.
pub fn ns(t: Timespec) -> i128 {
    i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec)
}

/// Reads `clock` through the syscall, the library, and the syscall again.
///
/// Returns an error text unless both paths agree: the same errno, or a library reading
/// between the two syscall readings (zero tolerance, as in the kernel's selftest).
pub fn bracket(clock: ClockId) -> Result<Option<i128>, String> {
    let before = vdsotime::syscall::clock_gettime(clock);
    let lib = vdsotime::clock_gettime(clock);
    let after = vdsotime::syscall::clock_gettime(clock);
    match (before, lib, after) {
        (Ok(b), Ok(v), Ok(a)) => {
            let (b, v, a) = (ns(b), ns(v), ns(a));
            if b <= v && v <= a {
                Ok(Some(v))
            } else {
                Err(format!(
                    "{clock:?}: library {v} outside syscall bracket [{b}, {a}]"
                ))
            }
        }
        (Err(e1), Err(e2), Err(e3)) if e1 == e2 && e2 == e3 => Ok(None),
        (b, v, a) => Err(format!(
            "{clock:?}: syscall {b:?}, library {v:?}, syscall {a:?}"
        )),
    }
}

/// Raw `clock_gettime` / `clock_getres` syscalls through libc: the oracles, shared with
/// the other tests (64-bit time on every target).
#[path = "../support/kernel.rs"]
mod kernel;
#[allow(unused_imports)] // not every test file uses both
pub use kernel::{clock_getres as libc_clock_getres, clock_gettime as libc_clock_gettime};

/// Visible skips that `VDSOTIME_REQUIRE` can turn into failures.
#[path = "../support/skip.rs"]
pub mod skip;

/// Child processes with a time limit that kills their whole process group.
#[allow(clippy::duplicate_mod)] // a test file may have `getrandom_common` too
#[path = "../support/process.rs"]
pub mod process;

/// Re-running this test binary as a child.
#[path = "../support/child.rs"]
pub mod child;

/// The fixture directory with other architectures' vDSO images.
pub fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Real vDSO images to test with: this process's own (via the library, and independently
/// through /proc/self/mem) and every `tests/fixtures/*.so`, as (label, bytes).
pub fn real_images() -> Vec<(String, Vec<u8>)> {
    let mut images = Vec::new();
    // Miri cannot see a vDSO: it reads images from files only.
    if !cfg!(miri) {
        if let Some(v) = vdsotime::vdso() {
            images.push((
                "this process (vdsotime::vdso)".to_owned(),
                v.bytes().to_vec(),
            ));
        }
        if let Some(bytes) = own_vdso_from_proc() {
            images.push(("this process (/proc/self/mem)".to_owned(), bytes));
        }
    }
    images.extend(images_in(&fixture_dir()));
    if let Some(dir) = std::env::var_os(IMAGE_DIR_ENV) {
        images.extend(images_in(std::path::Path::new(&dir)));
    }
    images
}

/// Extra directory of `*.so` images to test (used for Miri runs, which have no vDSO).
pub const IMAGE_DIR_ENV: &str = "VDSOTIME_REL_IMAGE_DIR";

/// Every `*.so` file in `dir`, sorted by name, as (file name, bytes).
fn images_in(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "so"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .filter_map(|p| {
            let bytes = std::fs::read(&p).ok()?;
            Some((p.file_name()?.to_string_lossy().into_owned(), bytes))
        })
        .collect()
}

/// This process's `[vdso]` mapping read through /proc/self/mem, without the library.
pub fn own_vdso_from_proc() -> Option<Vec<u8>> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let line = maps.lines().find(|l| l.ends_with("[vdso]"))?;
    let range = line.split_whitespace().next()?;
    let (a, b) = range.split_once('-')?;
    let start = u64::from_str_radix(a, 16).ok()?;
    let end = u64::from_str_radix(b, 16).ok()?;
    let f = std::fs::File::open("/proc/self/mem").ok()?;
    let mut buf = vec![0u8; usize::try_from(end - start).ok()?];
    std::os::unix::fs::FileExt::read_exact_at(&f, &mut buf, start).ok()?;
    Some(buf)
}

/// Brackets `vdsotime::time()` by the seconds of two CLOCK_REALTIME_COARSE syscalls.
///
/// Not by the `time` syscall: that one reads the timekeeper's seconds without its seqcount,
/// and the kernel (seen on 6.18) publishes a new second to the vDSO data a moment before
/// the timekeeper copy that `time` reads, so `__vdso_time` can be one second ahead of two
/// `time` syscalls around it. The coarse clock_gettime syscall waits for the update.
pub fn bracket_time() -> Result<i64, String> {
    let coarse = || {
        vdsotime::syscall::clock_gettime(ClockId::REALTIME_COARSE)
            .map(|t| t.tv_sec)
            .map_err(|e| format!("syscall REALTIME_COARSE: {e}"))
    };
    let b = coarse()?;
    let v = vdsotime::time();
    let a = coarse()?;
    if b <= v && v <= a {
        Ok(v)
    } else {
        Err(format!(
            "time() {v} outside the coarse-clock bracket [{b}, {a}]"
        ))
    }
}
