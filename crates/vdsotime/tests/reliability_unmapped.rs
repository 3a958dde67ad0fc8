//! A process that unmaps its vDSO (as sandboxes and checkpoint/restore tools do), or makes
//! it unreadable (`PROT_NONE`), gets the system call from every function not yet bound,
//! with the system call's answers: the first call that binds a function confirms the
//! image can still be read before reading it.
//! (A function bound while the image was mapped keeps calling it, and faults, as glibc's
//! do: that is stated in the crate docs, not tested.)

mod reliability_common;

use std::io::Write;
use std::time::Duration;

use reliability_common::{bracket, bracket_time, child_mode, run_child, skip};
use vdsotime::{ClockId, Function, Path};

const TEST: &str = "a_process_that_unmapped_its_vdso_gets_the_system_call";

/// The mappings to remove: the one holding `AT_SYSINFO_EHDR` (`[vdso]`; an emulator may
/// name it otherwise) and the kernel's data pages beside it (`[vvar]`, `[vvar_vclock]`), as
/// `(start, length)`; `None` if no mapping holds `AT_SYSINFO_EHDR`.
fn vdso_mappings(ehdr: usize) -> Option<Vec<(usize, usize)>> {
    let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
    let mut image = None;
    let mut found = Vec::new();
    for line in maps.lines() {
        let range = line.split_whitespace().next().unwrap();
        let (a, b) = range.split_once('-').unwrap();
        let a = usize::from_str_radix(a, 16).unwrap();
        let b = usize::from_str_radix(b, 16).unwrap();
        if (a..b).contains(&ehdr) {
            image = Some((a, b - a));
        } else if line.contains("[vvar") {
            found.push((a, b - a));
        }
    }
    found.push(image?);
    Some(found)
}

/// Every function, after the vDSO is gone: the system call's answers, by the syscall path.
fn check_every_function() {
    for clock in ClockId::ALL.iter().copied().chain([ClockId::from_raw(-1)]) {
        bracket(clock).unwrap();
        assert_eq!(
            vdsotime::clock_getres(clock),
            vdsotime::syscall::clock_getres(clock),
            "clock_getres({clock:?})"
        );
    }
    bracket_time().unwrap();
    let b = vdsotime::syscall::gettimeofday().unwrap();
    let v = vdsotime::gettimeofday().unwrap();
    let a = vdsotime::syscall::gettimeofday().unwrap();
    assert!(b <= v && v <= a, "gettimeofday {v:?} not in [{b:?}, {a:?}]");
    let (cpu, _) = vdsotime::getcpu().unwrap();
    assert!((cpu as usize) < 65536);
    let mut buf = [0u8; 32];
    assert_eq!(
        vdsotime::getrandom(&mut buf, vdsotime::GrndFlags::from_raw(0)),
        Ok(32)
    );
    for f in [
        Function::ClockGettime(ClockId::MONOTONIC),
        Function::ClockGetres(ClockId::MONOTONIC),
        Function::Gettimeofday,
        Function::Time,
        Function::Getrandom,
    ] {
        let p = vdsotime::path(f);
        assert!(
            matches!(p, Path::Syscall),
            "{f:?} takes {p} with no vDSO mapped"
        );
    }
    assert!(
        vdsotime::vdso().is_none(),
        "vdso() found an unreadable image"
    );
    assert!(vdsotime::raw::clock_gettime().is_none());
}

/// The child: unmaps the vDSO (or, with a mode that starts `prot_none`, makes the image
/// `PROT_NONE` and leaves it mapped), then calls every function. `fresh`: nothing was
/// called before; `located`: the image was found (`vdso()`) but no function bound.
fn child(mode: &str) {
    // SAFETY: getauxval only reads the process's aux vector.
    let ehdr = unsafe { libc::getauxval(libc::AT_SYSINFO_EHDR) } as usize;
    let Some(mappings) = vdso_mappings(ehdr) else {
        println!("\nUNMAPPED_NONE: no mapping holds AT_SYSINFO_EHDR {ehdr:#x}");
        std::io::stdout().flush().unwrap();
        // SAFETY: ends the process, as below.
        unsafe { libc::_exit(0) };
    };
    if mode.ends_with("located") {
        assert_eq!(vdsotime::vdso().map(|v| v.base()), Some(ehdr));
    }
    if mode.starts_with("prot_none") {
        let &(start, len) = mappings.last().expect("the image's mapping");
        // SAFETY: the vDSO's image made unreadable; as below, nothing calls into it but
        // the library under test, and the child ends with _exit.
        let ret = unsafe { libc::mprotect(start as *mut _, len, libc::PROT_NONE) };
        assert_eq!(ret, 0);
        check_every_function();
        println!("\nUNMAPPED_OK {mode}: the image made PROT_NONE");
        std::io::stdout().flush().unwrap();
        // SAFETY: ends the process without the harness's own clock readings.
        unsafe { libc::_exit(0) };
    }
    for &(start, len) in &mappings {
        // SAFETY: the vDSO's own mappings; nothing in this process calls the vDSO from
        // here on but the library under test (glibc's own clock functions would fault,
        // so the child ends with _exit, before the test harness reads the clock).
        assert_eq!(unsafe { libc::munmap(start as *mut _, len) }, 0);
    }
    check_every_function();
    println!("\nUNMAPPED_OK {mode}: {} mappings removed", mappings.len());
    std::io::stdout().flush().unwrap();
    // SAFETY: ends the process without the harness's own clock readings.
    unsafe { libc::_exit(0) };
}

/// Why the test cannot run on i386.
const I386: &str = "on i386 the C library makes its system calls through the vDSO's \
                    __kernel_vsyscall: munmap of the vDSO returns into the unmapped page, and \
                    the process dies before the library under test is called";

#[test]
fn a_process_that_unmapped_its_vdso_gets_the_system_call() {
    if let Some(mode) = child_mode() {
        return child(&mode);
    }
    // SAFETY: getauxval only reads the process's aux vector.
    if unsafe { libc::getauxval(libc::AT_SYSINFO_EHDR) } == 0 {
        return skip::skip(TEST, "vdso", "no vDSO to unmap");
    }
    if cfg!(target_arch = "x86") {
        return skip::skip(TEST, "vdso-unmap", I386);
    }
    // QEMU user mode may keep the guest's address space reserved in the host process: a page
    // the guest unmapped may still be mapped there, and the host's kernel then says so. (Under
    // qemu-system the guest's own kernel answers; that runs.)
    if let Some(emulator) = std::env::var("VDSOTIME_EMULATOR")
        .ok()
        .filter(|e| !e.contains("system mode"))
    {
        return skip::skip(
            TEST,
            "vdso",
            format!("{emulator}: a page the guest unmapped may stay mapped in the emulator"),
        );
    }
    for mode in ["fresh", "located", "prot_none_fresh", "prot_none_located"] {
        let run = run_child(TEST, mode, &[], Duration::from_secs(60));
        if let Some(why) = run.values("UNMAPPED_NONE:").first() {
            return skip::skip(TEST, "vdso", why);
        }
        assert!(
            run.status.success() && run.values("UNMAPPED_OK").len() == 1,
            "{mode}: {run:#?}"
        );
    }
}
