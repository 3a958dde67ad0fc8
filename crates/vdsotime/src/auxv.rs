//! Where the vDSO is: `AT_SYSINFO_EHDR` in the auxiliary vector the kernel hands every
//! process. Four ways to read it, because not every program has all of them:
//!
//! - [`getauxval`]: libc's copy (only with the `std` feature, which links a libc);
//! - [`from_proc`]: `/proc/self/auxv`, any kernel, needs procfs;
//! - [`from_prctl`]: `prctl(PR_GET_AUXV)`, Linux 6.4+, no file system needed, but it
//!   reports the host's vector under emulators that do not know it (valgrind);
//! - [`from_vector`]: a pointer to the vector itself, for `#![no_main]` programs and
//!   runtimes that find it after `envp` on the initial stack.
//!
//! All of them use raw system calls and stack buffers: no allocation, no locks.

use crate::sys::{nr, syscall};
use crate::Errno;
use core::mem::size_of;

/// End of the vector.
pub const AT_NULL: usize = 0;
/// The system page size.
pub const AT_PAGESZ: usize = linux_raw_sys::auxvec::AT_PAGESZ as usize;
/// The address of the vDSO's ELF header.
pub const AT_SYSINFO_EHDR: usize = linux_raw_sys::auxvec::AT_SYSINFO_EHDR as usize;

const WORD: usize = size_of::<usize>();
const ENTRY: usize = 2 * WORD;
/// Room for 64 entries; a vector has about 25 and `AT_SYSINFO_EHDR` comes early.
const BUF_WORDS: usize = 128;

/// `AT_SYSINFO_EHDR` by the best means this build has; `None` means no vDSO
/// (valgrind, `vdso=0`, some emulators) and every call then goes through syscalls.
///
/// ```
/// // A normal Linux process has a vDSO; under valgrind this is None.
/// if let Some(addr) = vdsotime::auxv::sysinfo_ehdr() {
///     assert_ne!(addr, 0);
/// }
/// ```
pub fn sysinfo_ehdr() -> Option<usize> {
    lookup(AT_SYSINFO_EHDR)
}

/// Any auxv entry by the best means this build has (see the module docs for the order).
///
/// # Fallback
///
/// `None` for a key the vector does not hold, or holds as 0, and when no vector can be
/// read (no libc, no `/proc`, a kernel before 6.4 for `PR_GET_AUXV`).
///
/// # Example
///
/// ```
/// use vdsotime::auxv::AT_PAGESZ;
/// let page = vdsotime::auxv::lookup(AT_PAGESZ).expect("every kernel passes AT_PAGESZ");
/// assert!(page.is_power_of_two() && page >= 4096);
/// ```
pub fn lookup(key: usize) -> Option<usize> {
    lookup_from(key).map(|(value, _)| value)
}

/// Which vector an entry was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// This process's own, as the kernel (or the emulator running it) wrote it: libc's
    /// copy or `/proc/self/auxv`.
    Own,
    /// `PR_GET_AUXV`'s copy, which under an emulator is the host's, not this process's.
    #[cfg_attr(feature = "std", allow(dead_code))] // read only without libc
    Prctl,
}

/// `AT_SYSINFO_EHDR` and the vector it came from.
pub(crate) fn sysinfo_ehdr_from() -> Option<(usize, Source)> {
    lookup_from(AT_SYSINFO_EHDR)
}

/// [`lookup`], saying which vector answered.
fn lookup_from(key: usize) -> Option<(usize, Source)> {
    #[cfg(feature = "std")]
    {
        getauxval(key).map(|v| (v, Source::Own))
    }
    #[cfg(not(feature = "std"))]
    {
        // /proc/self/auxv first: emulators (valgrind, QEMU) rewrite it for their
        // guest, but pass `PR_GET_AUXV` to the host kernel, whose vDSO address is not
        // the guest's. prctl serves processes without procfs.
        match from_proc(key) {
            Ok(found) => found.map(|v| (v, Source::Own)),
            Err(_) => from_prctl(key).ok().flatten().map(|v| (v, Source::Prctl)),
        }
    }
}

/// libc's `getauxval(key)`; `None` for a missing or zero entry. `errno` is left as it
/// was: glibc and musl set it to `ENOENT` for a missing key (no vDSO under valgrind or
/// `vdso=0`, no `AT_RSEQ_FEATURE_SIZE` before Linux 6.3), and the C functions built on
/// this crate promise to leave it alone when they succeed.
///
/// # Example
///
/// ```
/// use vdsotime::auxv::AT_PAGESZ;
/// assert_eq!(vdsotime::auxv::getauxval(AT_PAGESZ), vdsotime::auxv::lookup(AT_PAGESZ));
/// assert_eq!(vdsotime::auxv::getauxval(0xdead), None);
/// ```
#[cfg(feature = "std")]
pub fn getauxval(key: usize) -> Option<usize> {
    use core::ffi::{c_int, c_ulong};
    extern "C" {
        fn getauxval(key: c_ulong) -> c_ulong;
        fn __errno_location() -> *mut c_int;
    }
    // SAFETY: __errno_location (glibc, musl) returns the calling thread's errno, valid for
    // the thread's lifetime; getauxval (glibc 2.16+, musl 1.1+) only reads the vector saved
    // at startup, takes no locks and is async-signal-safe. The restore puts back the value
    // read before the call, so a signal handler's errno handling is not disturbed either.
    let v = unsafe {
        let errno = __errno_location();
        let saved = errno.read();
        let v = getauxval(key as c_ulong);
        errno.write(saved);
        v
    } as usize;
    (v != 0).then_some(v)
}

/// Reads `key` from the vector `prctl(PR_GET_AUXV)` copies out (Linux 6.4+).
/// `Err(EINVAL)` on older kernels.
///
/// # Errors
///
/// `EINVAL` before Linux 6.4; whatever a seccomp filter makes `prctl` return.
///
/// # Example
///
/// ```
/// use vdsotime::auxv::{self, AT_PAGESZ};
/// match auxv::from_prctl(AT_PAGESZ) {
///     Ok(page) => assert!(page.is_some()),
///     // EINVAL before Linux 6.4; a seccomp filter may answer anything.
///     Err(e) => println!("PR_GET_AUXV refused: {e}"),
/// }
/// ```
pub fn from_prctl(key: usize) -> Result<Option<usize>, Errno> {
    let mut buf = [0usize; BUF_WORDS];
    let pr_get_auxv = linux_raw_sys::prctl::PR_GET_AUXV as usize;
    // SAFETY: the kernel writes at most `size_of_val(&buf)` bytes into `buf`; the
    // remaining arguments must be zero.
    let ret = unsafe {
        syscall(
            nr::__NR_prctl,
            pr_get_auxv,
            buf.as_mut_ptr() as usize,
            size_of_val(&buf),
            0,
            0,
        )
    };
    if let Some(e) = Errno::from_ret(ret) {
        return Err(e);
    }
    // The return value is the vector's full size; only what fitted was copied.
    let copied = (ret as usize).min(size_of_val(&buf)) / WORD;
    Ok(scan(&buf[..copied], key))
}

/// Reads `key` from `/proc/self/auxv`.
///
/// # Errors
///
/// The `openat` or `read` error: `ENOENT` without procfs, `EACCES` where it is hidden.
///
/// # Example
///
/// ```
/// use vdsotime::auxv::AT_PAGESZ;
/// if let Ok(page) = vdsotime::auxv::from_proc(AT_PAGESZ) {
///     assert!(page.is_some_and(|p| p >= 4096));
/// }
/// ```
pub fn from_proc(key: usize) -> Result<Option<usize>, Errno> {
    let path = b"/proc/self/auxv\0";
    let flags = (nr::O_RDONLY | nr::O_CLOEXEC) as usize;
    // SAFETY: `path` is NUL-terminated and outlives the call.
    let fd = unsafe {
        syscall(
            nr::__NR_openat,
            nr::AT_FDCWD as isize as usize,
            path.as_ptr() as usize,
            flags,
            0,
            0,
        )
    };
    if let Some(e) = Errno::from_ret(fd) {
        return Err(e);
    }
    let result = read_entries(fd as usize, key);
    // SAFETY: closes the descriptor opened above, which nothing else knows.
    unsafe { syscall(nr::__NR_close, fd as usize, 0, 0, 0, 0) };
    result
}

/// Reads whole entries from `fd` through a stack buffer until `key`, `AT_NULL` or EOF.
fn read_entries(fd: usize, key: usize) -> Result<Option<usize>, Errno> {
    let mut buf = [0usize; BUF_WORDS];
    let cap = size_of_val(&buf);
    let mut filled = 0; // bytes in buf, of which the leading whole entries are scanned
    loop {
        let free = cap - filled;
        // SAFETY: reads at most `free` bytes into the unfilled tail of `buf`.
        let got = unsafe {
            syscall(
                nr::__NR_read,
                fd,
                (buf.as_mut_ptr() as usize) + filled,
                free,
                0,
                0,
            )
        };
        if let Some(e) = Errno::from_ret(got) {
            if e == Errno::EINTR {
                continue;
            }
            return Err(e);
        }
        filled += got as usize;
        let whole = filled / ENTRY * ENTRY;
        let words = &buf[..whole / WORD];
        if let Some(v) = scan(words, key) {
            return Ok(Some(v));
        }
        if got == 0 || words.chunks_exact(2).any(|e| e[0] == AT_NULL) {
            return Ok(None);
        }
        // Keep a partial entry for the next read.
        buf.copy_within(whole / WORD..filled.div_ceil(WORD), 0);
        filled -= whole;
    }
}

/// Finds `key` in the vector at `auxv`, which ends with an `AT_NULL` entry.
///
/// # Safety
/// `auxv` must point to a readable, `AT_NULL`-terminated auxiliary vector, such as the
/// one after `envp` on a process's initial stack.
///
/// # Example
///
/// ```
/// use vdsotime::auxv::AT_PAGESZ;
/// // A vector as the kernel lays it out: (type, value) pairs, then AT_NULL.
/// let vector = [AT_PAGESZ, 4096, 0, 0];
/// // SAFETY: `vector` is readable and ends with an AT_NULL entry.
/// assert_eq!(unsafe { vdsotime::auxv::from_vector(vector.as_ptr(), AT_PAGESZ) }, Some(4096));
/// assert_eq!(unsafe { vdsotime::auxv::from_vector(vector.as_ptr(), 33) }, None);
/// ```
pub unsafe fn from_vector(auxv: *const usize, key: usize) -> Option<usize> {
    let mut p = auxv;
    loop {
        // SAFETY: the caller guarantees entries up to and including AT_NULL are readable.
        let (k, v) = unsafe { (p.read(), p.add(1).read()) };
        if k == AT_NULL {
            return None;
        }
        if k == key {
            return (v != 0).then_some(v);
        }
        // SAFETY: not yet at AT_NULL, so the next entry is part of the vector.
        p = unsafe { p.add(2) };
    }
}

/// Looks `key` up in whole (type, value) pairs; a zero value counts as absent.
fn scan(words: &[usize], key: usize) -> Option<usize> {
    words
        .chunks_exact(2)
        .take_while(|e| e[0] != AT_NULL)
        .find(|e| e[0] == key)
        .map(|e| e[1])
        .filter(|&v| v != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_stops_at_null_and_skips_zero() {
        let v = [AT_PAGESZ, 4096, AT_SYSINFO_EHDR, 0, AT_NULL, 0, 99, 1];
        assert_eq!(scan(&v, AT_PAGESZ), Some(4096));
        assert_eq!(scan(&v, AT_SYSINFO_EHDR), None);
        assert_eq!(scan(&v, 99), None);
    }

    /// libc's getauxval sets `errno` to ENOENT for a key the vector lacks; a lookup must not.
    #[cfg(feature = "std")]
    #[test]
    fn a_missing_key_leaves_errno_alone() {
        extern "C" {
            fn __errno_location() -> *mut core::ffi::c_int;
        }
        const ABSENT: usize = 0x7fff_fff0; // no kernel defines an AT_* this large
                                           // SAFETY: the calling thread's errno slot.
        let errno = unsafe { __errno_location() };
        // SAFETY: as above.
        unsafe { errno.write(4242) };
        assert_eq!(getauxval(ABSENT), None);
        assert_eq!(lookup(ABSENT), None);
        // SAFETY: as above.
        assert_eq!(unsafe { errno.read() }, 4242);
    }

    #[test]
    fn every_source_agrees() {
        let proc = from_proc(AT_SYSINFO_EHDR).unwrap();
        // Under valgrind /proc/self/auxv (and getauxval) hide the vDSO, but PR_GET_AUXV
        // reaches the host kernel, which still reports it: that is why `lookup` reads
        // /proc first.
        let emulated = std::env::var_os("VDSOTIME_EXPECT_NO_VDSO").is_some();
        if let (Ok(prctl), false) = (from_prctl(AT_SYSINFO_EHDR), emulated) {
            assert_eq!(prctl, proc);
        }
        #[cfg(feature = "std")]
        assert_eq!(getauxval(AT_SYSINFO_EHDR), proc);
        assert_eq!(from_proc(AT_PAGESZ).unwrap(), lookup(AT_PAGESZ));
    }
}
