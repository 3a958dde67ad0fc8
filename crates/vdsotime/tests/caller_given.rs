//! A runtime that hands the library its vDSO (or none) itself: through an image
//! address, or an auxiliary vector. Each case runs in its own child process, because
//! it changes the process-wide binding.

mod support;

use support::kernel;
use vdsotime::{ClockId, Function, Path};

fn run_child(case: &str) {
    let out = support::child::rerun("child", ("VDSOTIME_CALLER_CASE", case), &[]);
    support::child::assert_ran(&out, "case ok");
}

fn assert_monotonic_bracketed() {
    kernel::assert_bracketed(ClockId::MONOTONIC, "after init", vdsotime::clock_gettime);
    kernel::assert_bracketed(ClockId::from_raw(-1), "after init", vdsotime::clock_gettime);
}

#[test]
fn child() {
    let Some(case) = std::env::var_os("VDSOTIME_CALLER_CASE") else {
        return;
    };
    let real = vdsotime::auxv::sysinfo_ehdr();
    let monotonic = || vdsotime::path(Function::ClockGettime(ClockId::MONOTONIC));
    match case.to_str().unwrap() {
        "no-vdso" => {
            // SAFETY: 0 means "no vDSO"; no other thread uses the library yet.
            unsafe { vdsotime::init_from_image(0) };
            assert!(vdsotime::vdso().is_none());
            assert_eq!(monotonic(), Path::Syscall);
            assert_monotonic_bracketed();
            // And back to the real one.
            match real {
                Some(addr) => {
                    // SAFETY: the kernel's vDSO address, mapped for the life of the process.
                    unsafe { vdsotime::init_from_image(addr) };
                    assert!(monotonic().is_vdso());
                    assert_monotonic_bracketed();
                }
                None => support::skip::skip(
                    "no_vdso_given_means_syscalls",
                    "vdso",
                    "no vDSO in this process to go back to",
                ),
            }
        }
        "auxv" => {
            // A copy of the process's own vector, as a runtime would find it on the stack.
            let bytes = std::fs::read("/proc/self/auxv").unwrap();
            let words: Vec<usize> = bytes
                .chunks_exact(size_of::<usize>())
                .map(|c| usize::from_ne_bytes(c.try_into().unwrap()))
                .collect();
            // SAFETY: `words` is an AT_NULL-terminated vector; its AT_SYSINFO_EHDR is the
            // kernel's mapping.
            unsafe { vdsotime::init_from_auxv(words.as_ptr()) };
            assert_eq!(vdsotime::vdso().map(|v| v.base()), real);
            assert_eq!(monotonic().is_vdso(), real.is_some());
            assert_monotonic_bracketed();
        }
        "bad-image" => {
            // A page that is not an ELF image: refused, so every call uses syscalls.
            let page = vec![0x55u8; 8192];
            let addr = (page.as_ptr() as usize).next_multiple_of(4096);
            // SAFETY: at least 4 KiB of `page` are readable from `addr` and it lives
            // until the process exits (leaked below).
            unsafe { vdsotime::init_from_image(addr) };
            std::mem::forget(page);
            assert!(vdsotime::vdso().is_none());
            assert_eq!(monotonic(), Path::Syscall);
            assert_monotonic_bracketed();
        }
        "raw-first" => {
            // Asked before any call: the getter must resolve the table itself.
            let direct = vdsotime::raw::clock_gettime().is_some();
            let expected = real.is_some()
                && !cfg!(target_arch = "powerpc64")
                && std::env::var_os("VDSOTIME_EXPECT_NO_VDSO").is_none();
            assert_eq!(direct, expected, "raw::clock_gettime() in a fresh process");
        }
        other => panic!("unknown case {other}"),
    }
    println!("case ok");
}

#[test]
fn no_vdso_given_means_syscalls() {
    run_child("no-vdso");
}

#[test]
fn auxv_pointer_given_by_the_caller() {
    run_child("auxv");
}

#[test]
fn raw_symbol_available_before_any_call() {
    run_child("raw-first");
}

#[test]
fn malformed_image_given_by_the_caller_is_refused() {
    run_child("bad-image");
}
