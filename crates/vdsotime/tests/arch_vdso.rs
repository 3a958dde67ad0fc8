//! On whatever architecture this runs (natively, or under QEMU by `cargo xtask cross`): the
//! process's vDSO is found, it exports every symbol the architecture's table names, the calls
//! really go through it, and what they return agrees with the kernel's system calls.
//!
//! `VDSOTIME_EXPECT_NO_VDSO=1` flips the expectation for runs without a vDSO (valgrind):
//! then nothing may claim the vDSO path, and the results must still match the syscalls.
//! `VDSOTIME_DUMP_DIR=dir` also writes the image to `dir/<arch>.so` (the test fixtures).

mod support;

use std::collections::BTreeSet;
use support::skip::skip;
use vdsotime::{arch, auxv, syscall, ClockId, Errno, Function, Path, Vdso};

/// Whether this run must have a vDSO (everything but valgrind-like runs).
fn expect_vdso() -> bool {
    std::env::var_os("VDSOTIME_EXPECT_NO_VDSO").is_none_or(|v| v != "1")
}

/// The process's vDSO, which must exist unless the run says otherwise.
fn own_vdso() -> Option<Vdso<'static>> {
    let v = vdsotime::vdso();
    if expect_vdso() {
        assert!(
            v.is_some(),
            "no vDSO found on {} (auxv says {:?}); set VDSOTIME_EXPECT_NO_VDSO=1 where none is expected",
            std::env::consts::ARCH,
            auxv::sysinfo_ehdr()
        );
    } else {
        assert!(
            v.is_none(),
            "VDSOTIME_EXPECT_NO_VDSO=1 but a vDSO was found"
        );
    }
    v
}

/// Reports the part of `test` that needs a vDSO as skipped.
fn skip_without_vdso(test: &str) {
    skip(
        test,
        "vdso",
        "no vDSO in this process: only the syscall path was checked",
    );
}

/// `AT_SYSINFO_EHDR` read here, independently of the library, from /proc/self/auxv.
fn proc_auxv_sysinfo_ehdr() -> Option<usize> {
    const WORD: usize = std::mem::size_of::<usize>();
    let bytes = std::fs::read("/proc/self/auxv").expect("/proc/self/auxv is readable");
    bytes.chunks_exact(2 * WORD).find_map(|entry| {
        let (k, v) = entry.split_at(WORD);
        let key = usize::from_ne_bytes(k.try_into().ok()?);
        let value = usize::from_ne_bytes(v.try_into().ok()?);
        (key == auxv::AT_SYSINFO_EHDR && value != 0).then_some(value)
    })
}

#[test]
fn vdso_is_found_where_the_auxiliary_vector_says() {
    let from_proc_here = proc_auxv_sysinfo_ehdr();
    assert_eq!(auxv::sysinfo_ehdr(), from_proc_here);
    let Some(v) = own_vdso() else {
        assert_eq!(
            from_proc_here, None,
            "auxv has a vDSO the library did not take"
        );
        return skip_without_vdso("vdso_is_found_where_the_auxiliary_vector_says");
    };
    assert_eq!(Some(v.base()), from_proc_here);
    assert!(
        v.is_native(),
        "own vDSO is machine {} {:?}",
        v.machine(),
        v.class()
    );
    let table = v.arch().expect("own vDSO has an architecture table");
    assert_eq!(table, arch::NATIVE);
    let endian = if cfg!(target_endian = "little") {
        vdsotime::Endian::Little
    } else {
        vdsotime::Endian::Big
    };
    assert_eq!(v.endian(), endian);
    let class = if cfg!(target_pointer_width = "64") {
        vdsotime::ElfClass::Elf64
    } else {
        vdsotime::ElfClass::Elf32
    };
    assert_eq!(v.class(), class);
}

/// The readers that do not use libc's `getauxval` (the path of `no_std` builds and of
/// programs not linked to glibc) agree with the vector itself.
#[test]
fn auxv_readers_without_getauxval_agree() {
    let expected = proc_auxv_sysinfo_ehdr();
    assert_eq!(auxv::from_proc(auxv::AT_SYSINFO_EHDR), Ok(expected));
    match auxv::from_prctl(auxv::AT_SYSINFO_EHDR) {
        // valgrind rewrites /proc/self/auxv and the vector on the stack, not the kernel's
        // copy PR_GET_AUXV returns: there, prctl still names the real vDSO.
        Ok(_) if !expect_vdso() => {}
        Ok(found) => assert_eq!(found, expected, "prctl(PR_GET_AUXV) disagrees"),
        // Kernels before 6.4 (or an emulator) do not know PR_GET_AUXV.
        Err(e) => assert_eq!(e, Errno::EINVAL, "prctl(PR_GET_AUXV) failed with {e}"),
    }
}

/// Symbols of the native table that older kernels lack: `clock_getres64`
/// (`__vdso_clock_getres_time64` is newer than Linux 6.18, whose 32-bit x86 vDSO lacks it),
/// and on 32-bit x86 `getcpu` (Debian's 6.1 i386 kernel exports none, seen by
/// `cargo xtask kernels`; the 6.18 x86-64 kernel's compat vDSO has it).
fn newer_kernels_only(table: &arch::ArchTable, name: &str) -> bool {
    Some(name) == table.clock_getres64 || (cfg!(target_arch = "x86") && Some(name) == table.getcpu)
}

/// Every symbol the table names is exported at the table's version, except those only newer
/// kernels have ([`newer_kernels_only`]); those, where present, must have the version too.
#[test]
fn every_symbol_of_the_native_table_is_exported_with_its_version() {
    let Some(v) = own_vdso() else {
        return skip_without_vdso("every_symbol_of_the_native_table_is_exported_with_its_version");
    };
    let table = arch::NATIVE;
    let listed: BTreeSet<&str> = v.symbols().map(|s| s.name).collect();
    let mut missing = Vec::new();
    for name in table.symbols() {
        let optional = newer_kernels_only(table, name);
        match v.lookup(name, Some(table.version)) {
            Some(sym) => {
                assert_eq!(sym.name, name);
                if v.has_versions() {
                    assert_eq!(sym.version, Some(table.version), "{name}");
                }
                assert_eq!(sym.address, v.base() + sym.offset, "{name}");
                assert!(
                    sym.offset < v.bytes().len(),
                    "{name} lies outside the image"
                );
                assert!(
                    listed.contains(name),
                    "{name} found by lookup but not listed"
                );
            }
            None if optional => {}
            None => missing.push(name),
        }
    }
    assert!(
        missing.is_empty(),
        "{} vDSO lacks {missing:?} at {}; it exports {listed:?}",
        table.name,
        table.version
    );
}

/// Whether this process's vDSO exports `name`.
fn v_exports(name: &str) -> bool {
    own_vdso().is_some_and(|v| v.symbols().any(|s| s.name == name))
}

/// The function must be served by the vDSO symbol `expected`, at the table's version.
fn assert_vdso_path(f: Function, expected: &str) {
    let table = arch::NATIVE;
    match vdsotime::path(f) {
        Path::Vdso { symbol, version } => {
            assert_eq!(symbol, expected, "{f:?}");
            assert_eq!(version, Some(table.version), "{f:?}");
        }
        other => panic!("{f:?} takes {other}; expected {expected}"),
    }
}

#[test]
fn clock_gettime_goes_through_the_vdso() {
    if own_vdso().is_none() {
        for clock in ClockId::ALL {
            assert_eq!(vdsotime::path(Function::ClockGettime(clock)), Path::Syscall);
        }
        return skip_without_vdso("clock_gettime_goes_through_the_vdso");
    }
    let table = arch::NATIVE;
    // 32-bit: only the time64 symbol can return times past 2038.
    let expected = if cfg!(target_pointer_width = "32") {
        table
            .clock_gettime64
            .expect("32-bit tables name a time64 clock_gettime")
    } else {
        table
            .clock_gettime
            .expect("64-bit tables name clock_gettime")
    };
    assert_vdso_path(Function::ClockGettime(ClockId::MONOTONIC), expected);
    assert_vdso_path(Function::ClockGettime(ClockId::REALTIME), expected);
}

#[test]
fn other_functions_use_the_symbols_the_table_offers() {
    if own_vdso().is_none() {
        for f in [Function::Gettimeofday, Function::Time] {
            assert_eq!(vdsotime::path(f), Path::Syscall, "{f:?}");
        }
        let rseq = matches!(
            vdsotime::rseq::area(),
            vdsotime::RseqArea::Glibc { node: true, .. }
        );
        let getcpu = vdsotime::path(Function::Getcpu);
        assert_eq!(getcpu, if rseq { Path::Rseq } else { Path::Syscall });
        return skip_without_vdso("other_functions_use_the_symbols_the_table_offers");
    }
    let table = arch::NATIVE;
    if let Some(name) = table.gettimeofday {
        assert_vdso_path(Function::Gettimeofday, name);
    }
    if matches!(
        vdsotime::rseq::area(),
        vdsotime::RseqArea::Glibc { node: true, .. }
    ) {
        assert_eq!(vdsotime::path(Function::Getcpu), Path::Rseq);
    } else if let Some(name) = table.getcpu {
        if v_exports(name) || !newer_kernels_only(table, name) {
            assert_vdso_path(Function::Getcpu, name);
        } else {
            // An older kernel without it: the system call, never a missing symbol.
            assert_eq!(vdsotime::path(Function::Getcpu), Path::Syscall);
        }
    }
    // time() uses a 64-bit `time` symbol where there is one, else the vDSO's coarse
    // clock through the clock_gettime symbol (never the syscall while the vDSO has one).
    match table.time.filter(|_| cfg!(target_pointer_width = "64")) {
        Some(name) => assert_vdso_path(Function::Time, name),
        None => {
            let Path::Vdso { symbol: clock, .. } =
                vdsotime::path(Function::ClockGettime(ClockId::REALTIME_COARSE))
            else {
                panic!(
                    "REALTIME_COARSE is not served by the vDSO on {}",
                    table.name
                )
            };
            let expected = Path::VdsoCoarse {
                symbol: clock,
                version: Some(table.version),
            };
            assert_eq!(vdsotime::path(Function::Time), expected);
        }
    }
}

/// Clocks whose vDSO reading must lie between two syscall readings (kernel selftest
/// `vdso_test_correctness`, zero tolerance), and errors that must be the syscall's.
#[test]
fn clock_gettime_is_bracketed_by_syscalls() {
    for clock in ClockId::ALL {
        for _ in 0..100 {
            let before = syscall::clock_gettime(clock);
            let got = vdsotime::clock_gettime(clock);
            let after = syscall::clock_gettime(clock);
            match (before, got, after) {
                (Ok(b), Ok(g), Ok(a)) => {
                    assert!(b <= g && g <= a, "{clock:?}: {b:?} <= {g:?} <= {a:?} fails");
                    assert!((0..1_000_000_000).contains(&g.tv_nsec), "{clock:?}: {g:?}");
                }
                (Err(b), got, Err(a)) if b == a => {
                    assert_eq!(got, Err(b), "{clock:?}: library disagrees with syscall");
                }
                other => panic!("{clock:?}: inconsistent results {other:?}"),
            }
        }
    }
}

#[test]
fn gettimeofday_and_time_are_bracketed_by_syscalls() {
    for _ in 0..100 {
        let before = syscall::gettimeofday().expect("gettimeofday syscall");
        let got = vdsotime::gettimeofday().expect("gettimeofday");
        let after = syscall::gettimeofday().expect("gettimeofday syscall");
        assert!(
            before <= got && got <= after,
            "{before:?} <= {got:?} <= {after:?}"
        );
        assert!((0..1_000_000).contains(&got.tv_usec), "{got:?}");

        // Bracketed by the coarse clock, the kernel's consistent source of `time`: the
        // `time` syscall itself can trail the vDSO by a second as the second turns.
        let coarse = || {
            syscall::clock_gettime(ClockId::REALTIME_COARSE)
                .expect("coarse")
                .tv_sec
        };
        let before = coarse();
        let got = vdsotime::time();
        let after = coarse();
        assert!(
            before <= got && got <= after,
            "time: {before} <= {got} <= {after}"
        );
    }
}

#[test]
fn clock_getres_equals_the_syscall() {
    for clock in ClockId::ALL {
        assert_eq!(
            vdsotime::clock_getres(clock),
            syscall::clock_getres(clock),
            "{clock:?}"
        );
    }
}

/// Invalid ids give the kernel's EINVAL (selftest `vdso_test_correctness`'s list). This
/// library sends ids its vDSO entry does not serve straight to the syscall, so on powerpc
/// a misread vDSO error (positive errno with CR0.SO set) would show as a disagreement here
/// only if that routing changed; the parity holds either way.
#[test]
fn invalid_clock_ids_give_the_syscalls_einval() {
    for raw in [-1, 10, 12, i32::MAX, i32::MIN] {
        let clock = ClockId::from_raw(raw);
        assert_eq!(
            syscall::clock_gettime(clock),
            Err(Errno::EINVAL),
            "syscall, clock {raw}"
        );
        assert_eq!(
            vdsotime::clock_gettime(clock),
            Err(Errno::EINVAL),
            "clock_gettime({raw})"
        );
        assert_eq!(
            syscall::clock_getres(clock),
            Err(Errno::EINVAL),
            "syscall getres, {raw}"
        );
        assert_eq!(
            vdsotime::clock_getres(clock),
            Err(Errno::EINVAL),
            "clock_getres({raw})"
        );
    }
}

/// Past the named clocks, whatever the kernel (or emulator: QEMU 10 answers
/// `clock_getres(16)` with 1 ns) says, the library says the same.
#[test]
fn unnamed_clock_ids_agree_with_the_syscall() {
    for raw in (12..=64).chain(-64..=-1) {
        let clock = ClockId::from_raw(raw);
        let kernel = syscall::clock_getres(clock);
        assert_eq!(vdsotime::clock_getres(clock), kernel, "clock_getres({raw})");
        if kernel.is_err() {
            assert_eq!(
                vdsotime::clock_gettime(clock).err(),
                syscall::clock_gettime(clock).err(),
                "clock_gettime({raw})"
            );
        }
    }
}

/// getcpu agrees with the syscall. The thread may migrate between calls, so an attempt
/// counts only when the two syscalls around the library call agree with each other.
#[test]
fn getcpu_agrees_with_the_syscall() {
    if let Err(e) = syscall::getcpu() {
        assert!(
            vdsotime::getcpu().is_err(),
            "getcpu works only through the library"
        );
        return skip(
            "getcpu_agrees_with_the_syscall",
            "getcpu",
            format_args!("the getcpu syscall fails here: {e}"),
        );
    }
    for _ in 0..1000 {
        let before = syscall::getcpu().expect("getcpu syscall");
        let got = vdsotime::getcpu().expect("getcpu");
        let after = syscall::getcpu().expect("getcpu syscall");
        if before == after {
            assert_eq!(got, before, "library getcpu between two agreeing syscalls");
            return;
        }
    }
    panic!("the thread migrated between every pair of getcpu syscalls");
}

/// The file name a target's image gets among the fixtures.
fn fixture_name() -> &'static str {
    match std::env::consts::ARCH {
        "x86" => "i686",
        "powerpc64" if cfg!(target_endian = "little") => "powerpc64le",
        other => other,
    }
}

/// A copy of the image parses to the same symbols (what the fixtures rely on), and is
/// written out when `VDSOTIME_DUMP_DIR` asks for it.
#[test]
fn image_copied_out_parses_the_same() {
    let Some(v) = own_vdso() else {
        return skip_without_vdso("image_copied_out_parses_the_same");
    };
    let copy = v.bytes().to_vec();
    let parsed = Vdso::parse(&copy).expect("copy of own vDSO parses");
    assert_eq!(
        (parsed.machine(), parsed.class(), parsed.endian()),
        (v.machine(), v.class(), v.endian())
    );
    let names = |v: &Vdso| -> Vec<(String, Option<String>, usize)> {
        v.symbols()
            .map(|s| (s.name.into(), s.version.map(Into::into), s.offset))
            .collect()
    };
    assert_eq!(names(&parsed), names(&v));
    assert!(!names(&v).is_empty());
    if let Some(dir) = std::env::var_os("VDSOTIME_DUMP_DIR") {
        let path = std::path::Path::new(&dir).join(format!("{}.so", fixture_name()));
        std::fs::write(&path, &copy).expect("write the vDSO image");
        println!("wrote {} ({} bytes)", path.display(), copy.len());
    }
}
