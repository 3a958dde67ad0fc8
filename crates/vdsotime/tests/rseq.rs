//! `getcpu` and `current_cpu` from glibc's rseq area: the area found is glibc's own
//! registration, its readings are the kernel's on every CPU and on every thread, and
//! with registration switched off the vDSO or the syscall answers instead.

mod support;

use support::kernel;
use vdsotime::RseqArea;

/// Pins the calling thread to `cpu`; false if the CPU is not in its allowed set.
fn pin(cpu: usize) -> bool {
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET writes inside it; sched_setaffinity
    // only reads it and affects the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) == 0
    }
}

/// On every CPU in turn, the library's readings are the syscall's.
fn check_every_cpu() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut checked = 0;
    for cpu in 0..cpus {
        if !pin(cpu) {
            continue;
        }
        let (kcpu, knode) = kernel::getcpu();
        assert_eq!(kcpu as usize, cpu);
        assert_eq!(vdsotime::getcpu(), Ok((kcpu, knode)), "getcpu on CPU {cpu}");
        assert_eq!(
            vdsotime::current_cpu(),
            Ok(kcpu),
            "current_cpu on CPU {cpu}"
        );
        checked += 1;
    }
    assert!(checked > 0, "could not pin to any CPU");
}

#[test]
fn readings_are_the_kernels_on_every_cpu_and_thread() {
    check_every_cpu();
    std::thread::spawn(check_every_cpu).join().unwrap();
}

/// The area found is glibc's registration, with the node where the kernel keeps it.
#[cfg(all(
    target_env = "gnu",
    any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "x86")
))]
#[test]
fn the_area_is_glibcs_registration() {
    extern "C" {
        static __rseq_offset: isize;
        static __rseq_size: u32;
    }
    // SAFETY: glibc 2.35+ (Debian 12's is 2.36) defines both, constant after start-up.
    let (offset, size) = unsafe { (__rseq_offset, __rseq_size) };
    // SAFETY: getauxval has no preconditions.
    let features = unsafe { libc::getauxval(27) }; // AT_RSEQ_FEATURE_SIZE
    let expected = if size == 0 {
        RseqArea::Absent // registration off (valgrind has no rseq)
    } else {
        RseqArea::Glibc {
            offset,
            node: features >= 24,
        }
    };
    assert_eq!(vdsotime::rseq::area(), expected);
}

/// With glibc's registration switched off, the area is absent and the readings still
/// the kernel's (from the vDSO or the syscall).
#[test]
fn without_registration_the_vdso_answers() {
    const TUNABLES: (&str, &str) = ("GLIBC_TUNABLES", "glibc.pthread.rseq=0");
    if std::env::var("GLIBC_TUNABLES").as_deref() == Ok(TUNABLES.1) {
        assert_eq!(vdsotime::rseq::area(), RseqArea::Absent);
        check_every_cpu();
        println!("child ran");
        return;
    }
    let out = support::child::rerun("without_registration_the_vdso_answers", TUNABLES, &[]);
    support::child::assert_ran(&out, "child ran");
}
