//! The kernel's own answers, by raw system calls through libc's `syscall(2)`, which
//! shares no code with vdsotime: the reference every test compares against.

#![allow(dead_code)]

use vdsotime::{ClockId, Errno, Timespec, Timeval, Timezone};

fn errno() -> Errno {
    Errno::from_raw(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
}

/// A clock syscall writing a 64-bit timespec: `clock_gettime64`/`clock_getres_time64`
/// on 32-bit targets, the plain ones on 64-bit.
fn clock_call(nr: libc::c_long, clock: ClockId) -> Result<Timespec, Errno> {
    let mut ts = [0i64; 2];
    // SAFETY: the kernel writes a 16-byte __kernel_timespec into `ts`.
    let ret = unsafe { libc::syscall(nr, clock.as_raw() as libc::c_long, ts.as_mut_ptr()) };
    if ret != 0 {
        return Err(errno());
    }
    Ok(Timespec {
        tv_sec: ts[0],
        tv_nsec: ts[1],
    })
}

#[cfg(target_pointer_width = "64")]
const NR_GETTIME: libc::c_long = libc::SYS_clock_gettime;
/// The time64 syscalls have the same numbers on every 32-bit architecture.
#[cfg(target_pointer_width = "32")]
const NR_GETTIME: libc::c_long = 403;
#[cfg(target_pointer_width = "64")]
const NR_GETRES: libc::c_long = libc::SYS_clock_getres;
#[cfg(target_pointer_width = "32")]
const NR_GETRES: libc::c_long = 406;

pub fn clock_gettime(clock: ClockId) -> Result<Timespec, Errno> {
    clock_call(NR_GETTIME, clock)
}

pub fn clock_getres(clock: ClockId) -> Result<Timespec, Errno> {
    clock_call(NR_GETRES, clock)
}

#[allow(clippy::useless_conversion)] // `c_long` is `i32` on 32-bit targets
pub fn gettimeofday() -> (Timeval, Timezone) {
    let mut tv = [0 as libc::c_long; 2];
    let mut tz = Timezone::default();
    // SAFETY: the kernel writes a native struct timeval and struct timezone.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_gettimeofday,
            tv.as_mut_ptr(),
            &mut tz as *mut Timezone,
        )
    };
    assert_eq!(ret, 0, "gettimeofday syscall failed");
    (
        Timeval {
            tv_sec: i64::from(tv[0]),
            tv_usec: i64::from(tv[1]),
        },
        tz,
    )
}

pub fn getcpu() -> (u32, u32) {
    let (mut cpu, mut node) = (0u32, 0u32);
    // SAFETY: the kernel writes both outputs.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_getcpu,
            &mut cpu as *mut u32,
            &mut node as *mut u32,
            0usize,
        )
    };
    assert_eq!(ret, 0, "getcpu syscall failed");
    (cpu, node)
}

/// Reads `clock` with `f` between two kernel readings and checks the sandwich, or
/// checks that `f` fails exactly as the kernel does.
pub fn assert_bracketed(
    clock: ClockId,
    what: &str,
    f: impl Fn(ClockId) -> Result<Timespec, Errno>,
) {
    let before = clock_gettime(clock);
    let got = f(clock);
    let after = clock_gettime(clock);
    match (before, got, after) {
        (Ok(b), Ok(g), Ok(a)) => {
            assert!(g.is_normalized(), "{what} {clock}: not normalized: {g:?}");
            assert!(
                b <= g && g <= a,
                "{what} {clock}: {g:?} outside [{b:?}, {a:?}]"
            );
        }
        (Err(e), got, Err(_)) => assert_eq!(
            got,
            Err(e),
            "{what} {clock}: errno differs from the syscall's"
        ),
        (b, g, a) => panic!("{what} {clock}: inconsistent results {b:?} {g:?} {a:?}"),
    }
}
