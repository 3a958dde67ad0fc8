//! tests/c/api_test.c against libvdsotime, installed by install.sh and linked through its
//! pkg-config files: every function against the raw system calls (brackets, errno, NULL).

mod support;

use std::process::Command;

use support::{
    archive_link_extra, cc, crate_dir, dynamic_section, install, pkg_config, run_ok, scratch,
};

fn api_test_source() -> std::path::PathBuf {
    crate_dir().join("tests/c/api_test.c")
}

/// Builds api_test.c against the installed shared library with `extra` flags and runs it.
fn run_against_shared(name: &str, extra: &[&str]) {
    let dir = scratch(name);
    let prefix = dir.join("prefix");
    install(&prefix);
    let exe = dir.join("api_test");
    let mut flags = pkg_config(&prefix, "vdsotime");
    flags.extend(extra.iter().map(|f| f.to_string()));
    cc(&[api_test_source()], &exe, &flags);

    let dynamic = dynamic_section(&exe);
    assert!(
        dynamic.contains("[libvdsotime.so.0]"),
        "not linked to libvdsotime.so.0:\n{dynamic}"
    );
    let out = run_ok(Command::new(&exe).env("LD_LIBRARY_PATH", prefix.join("lib")));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(", 0 failed"), "{stdout}");
    println!("{stdout}");
}

#[test]
fn shared_library_matches_the_kernel() {
    run_against_shared("shared", &[]);
}

/// 32-bit glibc with a 64-bit time_t: the header maps the plain names to the *64 functions.
#[cfg(target_pointer_width = "32")]
#[test]
fn shared_library_with_time64_on_32bit_matches_the_kernel() {
    run_against_shared(
        "shared-time64",
        &["-D_FILE_OFFSET_BITS=64", "-D_TIME_BITS=64"],
    );
}

#[test]
fn static_library_matches_the_kernel() {
    let dir = scratch("static");
    let prefix = dir.join("prefix");
    install(&prefix);
    let exe = dir.join("api_test");
    let mut flags = pkg_config(&prefix, "vdsotime-static");
    flags.extend(archive_link_extra());
    cc(&[api_test_source()], &exe, &flags);

    let dynamic = dynamic_section(&exe);
    assert!(
        !dynamic.contains("libvdsotime"),
        "static build still needs libvdsotime:\n{dynamic}"
    );
    let out = run_ok(Command::new(&exe).env_remove("LD_LIBRARY_PATH"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(", 0 failed"), "{stdout}");
    println!("{stdout}");
}

/// A program that unmaps its vDSO, or makes it unreadable (`PROT_NONE`), before libvdsotime
/// binds its functions (at load: from a constructor of its own that runs first, which
/// only the static archive allows) gets the system call's answers (it died of SIGSEGV
/// before the library checked, on binding, that the image can be read).
#[test]
fn a_program_that_unmapped_its_vdso_gets_the_system_call() {
    if cfg!(target_arch = "x86") {
        return support::skip::skip(
            "a_program_that_unmapped_its_vdso_gets_the_system_call",
            "vdso-unmap",
            "on i386 the C library makes its system calls through the vDSO's \
             __kernel_vsyscall: munmap of the vDSO returns into the unmapped page",
        );
    }
    // QEMU user mode may keep the guest's address space reserved in the host process: a
    // page the guest unmapped may still be mapped there, and the host's kernel then says so.
    if let Some(emulator) = std::env::var("VDSOTIME_EMULATOR")
        .ok()
        .filter(|e| !e.contains("system mode"))
    {
        return support::skip::skip(
            "a_program_that_unmapped_its_vdso_gets_the_system_call",
            "vdso",
            format!("{emulator}: a page the guest unmapped may stay mapped in the emulator"),
        );
    }
    let dir = scratch("unmapped");
    let prefix = dir.join("prefix");
    install(&prefix);
    let source = crate_dir().join("tests/c/unmapped.c");
    // The static archive only: see unmapped.c for why not the shared library.
    let exe = dir.join("unmapped-static");
    let mut flags = pkg_config(&prefix, "vdsotime-static");
    flags.extend(archive_link_extra());
    cc(std::slice::from_ref(&source), &exe, &flags);
    for mode in ["unmap", "prot_none"] {
        let out = run_ok(Command::new(&exe).env("VDSOTIME_TEST_UNMAP", mode));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains(", 0 failed"), "{mode}: {stdout}");
        println!("{mode}: {stdout}");
    }
}
