//! `vdsotime::getrandom`, `fill`, `State` and `syscall::getrandom` against the kernel's
//! `getrandom(2)` (by libc's `syscall`): every flag combination (known, unknown,
//! contradictory) at several lengths gives the same count or errno; a request past
//! the kernel's per-call limit is cut exactly where the kernel cuts it; the path and
//! the probed state parameters are what this kernel exports.
//!
//! Not testable on a booted machine: the answers before the kernel's generator is
//! ready (`EAGAIN` with `GRND_NONBLOCK`, blocking otherwise). There the vDSO makes the
//! system call itself (`lib/vdso/getrandom.c` checks `is_ready` first).

mod getrandom_common;
mod reliability_common;

use getrandom_common::{kernel, skip};
use reliability_common::expect_no_vdso;
use vdsotime::random::{self, State};
use vdsotime::{arch, Errno, Function, GrndFlags, Path};

const LENGTHS: [usize; 6] = [0, 1, 16, 33, 257, 4096];

fn flag_cases() -> Vec<GrndFlags> {
    (0..16)
        .chain([1 << 4, 1 << 8, 1 << 31, u32::MAX])
        .map(GrndFlags::from_raw)
        .collect()
}

/// Whether the bytes look written: a 16-byte run of zeros from a CSPRNG is a failure.
fn written(buf: &[u8]) -> bool {
    buf.len() < 16 || buf.iter().any(|&b| b != 0)
}

#[test]
fn every_flag_and_length_gives_the_syscalls_result() {
    let mut state = State::new();
    let mut checked = 0;
    for flags in flag_cases() {
        for len in LENGTHS {
            let want = kernel(&mut vec![0; len], flags);
            let mut bufs = [vec![0u8; len], vec![0u8; len], vec![0u8; len]];
            let got = [
                ("getrandom", vdsotime::getrandom(&mut bufs[0], flags)),
                ("State::getrandom", state.getrandom(&mut bufs[1], flags)),
                (
                    "syscall::getrandom",
                    vdsotime::syscall::getrandom(&mut bufs[2], flags),
                ),
            ];
            for ((what, g), buf) in got.iter().zip(&bufs) {
                assert_eq!(*g, want, "{what}({len} bytes, {flags:?})");
                if want.is_ok() {
                    assert!(written(buf), "{what}({len}, {flags:?}) wrote zeros");
                }
            }
            let fill = [
                ("fill", random::fill(&mut bufs[0], flags)),
                ("State::fill", state.fill(&mut bufs[1], flags)),
            ];
            // An empty buffer is filled without a call, so its flags are not checked.
            let want_fill = if len == 0 { Ok(()) } else { want.map(|_| ()) };
            for (what, f) in fill {
                assert_eq!(f, want_fill, "{what}({len} bytes, {flags:?})");
            }
            checked += 1;
        }
    }
    println!("{checked} flag/length cases equal to the syscall's");
}

#[test]
fn the_errors_are_the_kernels() {
    let mut buf = [0u8; 8];
    for bits in [8, 1 << 31, 6, 7, u32::MAX] {
        let flags = GrndFlags::from_raw(bits);
        assert_eq!(kernel(&mut buf, flags), Err(Errno::EINVAL), "{flags:?}");
        assert_eq!(vdsotime::getrandom(&mut buf, flags), Err(Errno::EINVAL));
    }
}

/// `ssize_t` results are limited per call to `INT_MAX` rounded down to a page
/// (`MAX_RW_COUNT`) by both the vDSO and the system call. 2 GiB of address space is
/// backed by one 1 MiB memfd mapped 2048 times, so the test writes 2 GiB into 1 MiB
/// (about 3 s a call on the project's loaded 2-core VM). `fill`'s continuation after
/// a short read is tested on its own, in `random`'s unit tests.
#[test]
fn a_request_past_the_kernels_limit_is_cut_where_the_kernel_cuts() {
    const TEST: &str = "a_request_past_the_kernels_limit_is_cut_where_the_kernel_cuts";
    if cfg!(target_pointer_width = "32") {
        return skip(
            TEST,
            "bits64",
            "a 32-bit process cannot map 2 GiB for one buffer",
        );
    }
    let page = vdsotime::auxv::lookup(vdsotime::auxv::AT_PAGESZ).unwrap_or(4096);
    let limit = (i32::MAX as usize) & !(page - 1);
    let aliased = Aliased::new(1 << 31, 1 << 20);
    // SAFETY: the whole range is mapped read-write (aliases of one memfd); nothing else
    // refers to it.
    let buf = unsafe { std::slice::from_raw_parts_mut(aliased.base, aliased.len) };
    assert_eq!(
        kernel(buf, GrndFlags::NONE),
        Ok(limit),
        "the kernel's own cut"
    );
    assert_eq!(vdsotime::getrandom(buf, GrndFlags::NONE), Ok(limit));
    println!("2 GiB requests cut to {limit} bytes, as by the kernel");
}

/// A large address range whose pages alias one small memfd.
struct Aliased {
    base: *mut u8,
    len: usize,
    fd: libc::c_int,
}

impl Aliased {
    fn new(len: usize, chunk: usize) -> Aliased {
        // SAFETY: plain system calls on memory and a descriptor this test owns; every
        // result is checked.
        unsafe {
            let fd = libc::memfd_create(c"vdsotime-alias".as_ptr(), 0);
            assert!(fd >= 0, "memfd_create: {}", std::io::Error::last_os_error());
            assert_eq!(libc::ftruncate(fd, chunk as libc::off_t), 0);
            let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
            let base = libc::mmap(std::ptr::null_mut(), len, libc::PROT_NONE, flags, -1, 0);
            assert_ne!(base, libc::MAP_FAILED, "reserve {len} bytes");
            for i in 0..len / chunk {
                let at = base.cast::<u8>().add(i * chunk).cast();
                let prot = libc::PROT_READ | libc::PROT_WRITE;
                let p = libc::mmap(at, chunk, prot, libc::MAP_SHARED | libc::MAP_FIXED, fd, 0);
                assert_eq!(p, at, "alias {i}: {}", std::io::Error::last_os_error());
            }
            Aliased {
                base: base.cast(),
                len,
                fd,
            }
        }
    }
}

impl Drop for Aliased {
    fn drop(&mut self) {
        // SAFETY: the range and the descriptor are this value's alone.
        unsafe {
            libc::munmap(self.base.cast(), self.len);
            libc::close(self.fd);
        }
    }
}

#[test]
fn path_and_state_parameters_are_this_kernels() {
    let path = vdsotime::path(Function::Getrandom);
    let params = random::params();
    let exported = vdsotime::vdso().and_then(|v| {
        let name = arch::NATIVE.getrandom?;
        v.lookup(name, Some(arch::NATIVE.version))
    });
    println!("getrandom: {path}; params {params:?}");
    if expect_no_vdso() || exported.is_none() || cfg!(target_pointer_width = "32") {
        assert_eq!(path, Path::Syscall);
        assert_eq!(params, None);
        assert!(!State::new().is_vdso());
        assert_eq!(State::new().path(), Path::Syscall);
        return;
    }
    let sym = exported.expect("checked");
    let vdso = Path::Vdso {
        symbol: arch::NATIVE.getrandom.expect("named"),
        version: sym.version,
    };
    // Without `std` there are no per-thread states: `getrandom()` makes the system call,
    // and a caller-owned `State` is the vDSO's path.
    let expected = if cfg!(feature = "std") {
        vdso
    } else {
        Path::Syscall
    };
    assert_eq!(path, expected);
    let p = params.expect("the vDSO exports getrandom, so the probe must succeed");
    assert_eq!(
        p.mmap_prot,
        libc::PROT_READ as u32 | libc::PROT_WRITE as u32
    );
    const MAP_DROPPABLE: u32 = 0x08;
    assert_eq!(p.mmap_flags, MAP_DROPPABLE | libc::MAP_ANONYMOUS as u32);
    assert!(p.state_size > 0 && p.per_page() >= 1, "{p:?}");
    assert!(p.per_page() * p.state_size <= p.page_size, "{p:?}");
    let state = State::new();
    assert!(state.is_vdso());
    assert_eq!(state.path(), vdso);
}

/// `State` moves to another thread (it is `Send`) and keeps working there.
#[test]
fn a_state_moves_between_threads() {
    let mut state = State::new();
    let mut first = [0u8; 32];
    state.fill(&mut first, GrndFlags::NONE).unwrap();
    let (state, second) = std::thread::spawn(move || {
        let mut second = [0u8; 32];
        state.fill(&mut second, GrndFlags::NONE).unwrap();
        (state, second)
    })
    .join()
    .unwrap();
    assert_ne!(first, second);
    drop(state);
}
