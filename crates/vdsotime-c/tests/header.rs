//! include/vdsotime.h against the Rust side: the layouts of the types behind each pointer, and
//! the set of functions the header declares versus the ones libvdsotime.so exports.

mod support;

use std::collections::BTreeSet;
use std::mem::{offset_of, size_of};
use std::process::Command;

use support::{build_dir, crate_dir, run_ok, scratch};
use vdsotime::{Timespec, Timeval, Timezone};
use vdsotime_c::ctypes;

#[test]
fn header_layouts_match_rust() {
    let defines = [
        ("TIMESPEC64_SIZE", size_of::<Timespec>()),
        ("TIMESPEC64_SEC", offset_of!(Timespec, tv_sec)),
        ("TIMESPEC64_NSEC", offset_of!(Timespec, tv_nsec)),
        ("TIMEVAL64_SIZE", size_of::<Timeval>()),
        ("TIMEVAL64_SEC", offset_of!(Timeval, tv_sec)),
        ("TIMEVAL64_USEC", offset_of!(Timeval, tv_usec)),
        ("TIMEZONE_SIZE", size_of::<Timezone>()),
        ("TIMEZONE_DST", offset_of!(Timezone, tz_dsttime)),
        // The C library's types as the exported functions define them (vdsotime_c::ctypes),
        // against the C library's headers: on 32-bit musl these differ from the libc
        // crate's.
        ("TIMESPEC_SIZE", size_of::<ctypes::timespec>()),
        ("TIMESPEC_NSEC", offset_of!(ctypes::timespec, tv_nsec)),
        ("TIMEVAL_SIZE", size_of::<ctypes::timeval>()),
        ("TIMEVAL_USEC", offset_of!(ctypes::timeval, tv_usec)),
        ("TIME_T_SIZE", size_of::<ctypes::time_t>()),
        ("CLOCKID_T_SIZE", size_of::<libc::clockid_t>()),
        ("SSIZE_T_SIZE", size_of::<isize>()),
    ];
    let dir = scratch("header");
    let mut cmd = support::c_compiler();
    cmd.args(["-std=c11", "-pedantic", "-Wall", "-Wextra", "-Werror", "-c"])
        .arg("-I")
        .arg(crate_dir().join("include"))
        .arg(crate_dir().join("tests/c/header_check.c"))
        .arg("-o")
        .arg(dir.join("header_check.o"));
    for (name, value) in defines {
        cmd.arg(format!("-DEXPECT_{name}={value}"));
    }
    run_ok(&mut cmd);
}

/// `vdsotime_*` names declared as functions in the header (the text before each `(`).
fn declared() -> BTreeSet<String> {
    let header = std::fs::read_to_string(crate_dir().join("include/vdsotime.h")).expect("header");
    header
        .lines()
        .filter(|l| !l.trim_start().starts_with(['*', '/', '#']))
        .filter_map(|l| l.split_once('(').map(|(head, _)| head))
        .filter_map(|head| {
            head.split(|c: char| c.is_whitespace() || c == '*')
                .next_back()
        })
        .filter(|name| name.starts_with("vdsotime_"))
        .map(String::from)
        .collect()
}

fn exported() -> BTreeSet<String> {
    let out = run_ok(
        Command::new("nm")
            .args(["-D", "--defined-only", "--format=posix"])
            .arg(build_dir().join("libvdsotime_c.so")),
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let name = words.next()?;
            let kind = words.next()?;
            // T: a function; i: an indirect function (time and gettimeofday on glibc).
            (matches!(kind, "T" | "i") && name.starts_with("vdsotime_")).then(|| name.to_string())
        })
        .collect()
}

#[test]
fn every_declared_function_is_exported_and_nothing_else() {
    let declared = declared();
    let exported = exported();
    assert!(
        declared.len() >= 9,
        "header parse found too little: {declared:?}"
    );
    assert_eq!(
        declared, exported,
        "header declarations vs `nm -D` of libvdsotime_c.so"
    );
}

/// Where the library binds `time` and `gettimeofday` through IFUNC resolvers (glibc on
/// x86-64 and aarch64), they are `STT_GNU_IFUNC`; elsewhere plain functions.
#[test]
fn time_and_gettimeofday_are_indirect_where_glibc_resolves_them() {
    let out = run_ok(
        Command::new("nm")
            .args(["-D", "--defined-only", "--format=posix"])
            .arg(build_dir().join("libvdsotime_c.so")),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let ifunc = cfg!(all(target_env = "gnu", target_arch = "x86_64"));
    for name in [
        "vdsotime_time",
        "vdsotime_time64",
        "vdsotime_gettimeofday",
        "vdsotime_gettimeofday64",
    ] {
        let kind = text
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("{name} not exported:\n{text}"));
        assert_eq!(kind, if ifunc { "i" } else { "T" }, "{name}");
    }
}
