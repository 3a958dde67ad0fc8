//! The parser on real vDSO images from every architecture: QEMU user mode's
//! (`tests/fixtures/*.so`, dumped by `cargo xtask cross --dump`) and real Debian kernels'
//! (`tests/fixtures/kernels/`, dumped inside qemu-system by `cargo xtask kernels --dump`,
//! listed in `fixture_data`), and on variants of them that other kernels, toolchains and
//! emulators produce: GNU hash only, 64-bit `DT_HASH` (s390x), `STT_NOTYPE` symbols (ppc64),
//! zeroed time32 names (arm 5.5–5.7), no symbol versions, a foreign `e_machine`.
//!
//! These run on every target too, so a big-endian host parses little-endian images and
//! back.

mod fixture_data;
mod fixture_patch;

use fixture_data::Fixture;
use fixture_patch::*;
use std::collections::BTreeSet;
use vdsotime::{arch, ElfError, Vdso};

fn fixture(file: &str) -> &'static Fixture {
    fixture_data::all()
        .find(|f| f.file == file)
        .expect("known fixture")
}

fn load(file: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(file);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// (name, version) of every symbol the parser lists.
fn listed(v: &Vdso) -> BTreeSet<(String, Option<String>)> {
    v.symbols()
        .map(|s| (s.name.to_string(), s.version.map(str::to_string)))
        .collect()
}

/// The fixture's expected symbols; `versions: false` for an image stripped of them.
fn expected(f: &Fixture, versions: bool) -> BTreeSet<(String, Option<String>)> {
    f.symbols
        .iter()
        .map(|&(n, v)| (n.to_string(), versions.then(|| v.to_string())))
        .collect()
}

/// Every expected symbol is found by name and version, where `symbols()` says it is.
fn assert_lookups(f: &Fixture, v: &Vdso, what: &str) {
    for &(name, version) in f.symbols {
        let by_lookup = v
            .lookup(name, Some(version))
            .unwrap_or_else(|| panic!("{} ({what}): lookup({name}, {version}) failed", f.file));
        let listed = v.symbols().find(|s| s.name == name).expect("listed");
        assert_eq!(by_lookup, listed, "{} ({what}): {name}", f.file);
        assert_eq!(by_lookup.address, v.base() + by_lookup.offset);
        assert!(
            v.lookup(name, None).is_some(),
            "{}: {name} without version",
            f.file
        );
    }
    assert_eq!(v.lookup("__vdso_no_such_symbol", None), None);
}

#[test]
fn every_fixture_parses_to_its_exact_symbols() {
    for f in fixture_data::all() {
        let bytes = load(f.file);
        let v = Vdso::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", f.file));
        assert_eq!(
            (v.machine(), v.class(), v.endian()),
            (f.machine, f.class, f.endian),
            "{}",
            f.file
        );
        assert_eq!(v.arch(), Some(f.table), "{}", f.file);
        assert_eq!(
            (v.has_gnu_hash(), v.has_sysv_hash(), v.has_versions()),
            (f.hashes.0, f.hashes.1, true),
            "{}",
            f.file
        );
        assert_eq!(listed(&v), expected(f, true), "{}", f.file);
        assert_lookups(f, &v, "as dumped");
        let (name, _) = f.symbols[0];
        assert_eq!(
            v.lookup(name, Some("LINUX_0.0")),
            None,
            "{}: wrong version",
            f.file
        );
    }
}

/// The table's getrandom is the one a vDSO exports (the x86_64 image is from Linux 6.18,
/// arm64's from 6.12; QEMU's have none): found at the table's version where present, and no
/// image exports a getrandom under another name than its table's.
#[test]
fn getrandom_is_found_where_the_image_exports_it() {
    for f in fixture_data::all() {
        let bytes = load(f.file);
        let v = Vdso::parse(&bytes).expect("parses");
        let exported: Vec<&str> = f
            .symbols
            .iter()
            .map(|&(n, _)| n)
            .filter(|n| n.ends_with("_getrandom"))
            .collect();
        match f.table.getrandom {
            Some(name) if exported.contains(&name) => {
                let sym = v.lookup(name, Some(f.table.version)).expect("lookup");
                assert_eq!(sym.version, Some(f.table.version), "{}", f.file);
            }
            _ => assert!(
                exported.is_empty(),
                "{}: {exported:?} not in its table",
                f.file
            ),
        }
    }
    assert_eq!(arch::X86_64.getrandom, Some("__vdso_getrandom"));
    assert_eq!(arch::I686.getrandom, None, "32-bit: always the system call");
}

/// What the library binds (clock_gettime, clock_getres, gettimeofday) is in every image
/// at its table's version.
#[test]
fn every_fixture_has_its_tables_clock_symbols() {
    for f in fixture_data::all() {
        let bytes = load(f.file);
        let v = Vdso::parse(&bytes).expect("parses");
        let t = f.table;
        for name in [
            t.clock_gettime,
            t.clock_gettime64,
            t.clock_getres,
            t.gettimeofday,
        ]
        .into_iter()
        .flatten()
        {
            let sym = v.lookup(name, Some(t.version));
            assert_eq!(
                sym.map(|s| s.version),
                Some(Some(t.version)),
                "{}: {name}",
                f.file
            );
        }
    }
}

/// Each hash table alone finds every symbol; with neither, the image is refused.
#[test]
fn either_hash_table_alone_finds_every_symbol() {
    for f in fixture_data::all() {
        // Only an image with both tables can lose one and keep the other.
        let removable = if f.hashes == (true, true) {
            &[(DT_HASH, true), (DT_GNU_HASH, false)][..]
        } else {
            &[]
        };
        for &(removed, gnu_left) in removable {
            let mut elf = Elf::new(&load(f.file));
            elf.remove_dynamic(removed);
            let v = Vdso::parse(&elf.bytes).unwrap_or_else(|e| panic!("{}: {e}", f.file));
            assert_eq!((v.has_gnu_hash(), v.has_sysv_hash()), (gnu_left, !gnu_left));
            assert_eq!(
                listed(&v),
                expected(f, true),
                "{} without {removed:#x}",
                f.file
            );
            assert_lookups(
                f,
                &v,
                if gnu_left {
                    "GNU hash only"
                } else {
                    "DT_HASH only"
                },
            );
        }
        let mut elf = Elf::new(&load(f.file));
        for (tag, present) in [(DT_GNU_HASH, f.hashes.0), (DT_HASH, f.hashes.1)] {
            if present {
                elf.remove_dynamic(tag);
            }
        }
        assert_eq!(
            Vdso::parse(&elf.bytes).err(),
            Some(ElfError::NoHashTable),
            "{}",
            f.file
        );
    }
}

/// arm64 from Linux 6.11 (and riscv, loongarch) may ship only DT_GNU_HASH.
#[test]
fn aarch64_with_gnu_hash_only() {
    let f = fixture("aarch64.so");
    let mut elf = Elf::new(&load(f.file));
    elf.remove_dynamic(DT_HASH);
    assert!(!elf.has_dynamic(DT_HASH));
    let v = Vdso::parse(&elf.bytes).expect("GNU-hash-only image parses");
    assert!(v.has_gnu_hash() && !v.has_sysv_hash());
    let sym = v.lookup("__kernel_clock_gettime", Some("LINUX_2.6.39"));
    assert!(sym.is_some(), "clock_gettime through DT_GNU_HASH");
    assert_eq!(listed(&v), expected(f, true));
}

/// s390x's DT_HASH has 64-bit words (its GNU hash has 32-bit ones): read as 32-bit, the
/// bucket count would be 0 on this big-endian image.
#[test]
fn s390x_64bit_dt_hash_is_read_as_such() {
    let f = fixture("s390x.so");
    let mut elf = Elf::new(&load(f.file));
    let hash = elf
        .dynamic_value(DT_HASH)
        .expect("real s390x image has DT_HASH");
    let nbucket = elf.read_at_address(hash, 8);
    assert!(
        nbucket > 0 && elf.read_at_address(hash, 4) == 0,
        "64-bit words"
    );
    elf.remove_dynamic(DT_GNU_HASH);
    let v = Vdso::parse(&elf.bytes).expect("parses with DT_HASH alone");
    assert!(v.has_sysv_hash() && !v.has_gnu_hash());
    assert_eq!(listed(&v), expected(f, true));
    assert_lookups(f, &v, "64-bit DT_HASH only");
}

/// ppc64 vDSOs mark their entry points `STT_NOTYPE`; both kinds are functions, objects
/// are not.
#[test]
fn notype_and_func_symbols_are_found_objects_are_not() {
    let f = fixture("powerpc64le.so");
    let mut elf = Elf::new(&load(f.file));
    for &(name, _) in f.symbols {
        assert_eq!(
            elf.symbol_type(name),
            STT_NOTYPE,
            "the real image uses NOTYPE: {name}"
        );
    }
    for &(name, _) in f.symbols {
        elf.set_symbol_type(name, STT_FUNC);
    }
    let v = Vdso::parse(&elf.bytes).expect("parses");
    assert_eq!(listed(&v), expected(f, true), "as STT_FUNC");

    let f = fixture("x86_64.so");
    let mut elf = Elf::new(&load(f.file));
    elf.set_symbol_type("__vdso_clock_gettime", STT_NOTYPE);
    let v = Vdso::parse(&elf.bytes).expect("parses");
    assert_eq!(listed(&v), expected(f, true), "one NOTYPE symbol");
    elf.set_symbol_type("__vdso_clock_gettime", STT_OBJECT);
    let v = Vdso::parse(&elf.bytes).expect("parses");
    assert_eq!(
        v.lookup("__vdso_clock_gettime", None),
        None,
        "an object is no function"
    );
    assert!(!v.symbols().any(|s| s.name == "__vdso_clock_gettime"));
    assert_eq!(v.symbols().count(), f.symbols.len() - 1);
}

/// arm kernels 5.5–5.7 zeroed the names of the time32 symbols and left a broken
/// `__vdso_clock_gettime64`. The parser must show exactly that (time64 without time32),
/// which is what the arm table's `time64_needs_time32` rule keys on; the rule itself is
/// applied when binding the process's own vDSO (tests/time64_rule.rs on arm).
#[test]
fn arm_image_with_zeroed_time32_names() {
    let f = fixture("arm.so");
    let mut elf = Elf::new(&load(f.file));
    for name in [
        "__vdso_clock_gettime",
        "__vdso_gettimeofday",
        "__vdso_clock_getres",
    ] {
        elf.zero_symbol_name(name);
    }
    let v = Vdso::parse(&elf.bytes).expect("parses");
    let names: Vec<&str> = v.symbols().map(|s| s.name).collect();
    assert_eq!(names, ["__vdso_clock_gettime64"]);
    assert!(v
        .lookup("__vdso_clock_gettime64", Some("LINUX_2.6"))
        .is_some());
    assert_eq!(v.lookup("__vdso_clock_gettime", Some("LINUX_2.6")), None);
    assert_eq!(v.lookup("", None), None, "the empty name is no symbol");
    let table = v.arch().expect("arm table");
    assert!(table.time64_needs_time32);
    assert_eq!(table.clock_gettime, Some("__vdso_clock_gettime"));
}

/// Synthetic vDSOs (QEMU before 8.1's own, some sandboxes) may lack DT_VERDEF or
/// DT_VERSYM: a lookup that names a version still finds the unversioned symbols.
#[test]
fn images_without_versions_still_resolve() {
    for f in fixture_data::all() {
        for tags in [&[DT_VERDEF, DT_VERDEFNUM][..], &[DT_VERSYM][..]] {
            let mut elf = Elf::new(&load(f.file));
            for &tag in tags {
                elf.remove_dynamic(tag);
            }
            let v = Vdso::parse(&elf.bytes).unwrap_or_else(|e| panic!("{}: {e}", f.file));
            assert!(!v.has_versions(), "{} without {tags:x?}", f.file);
            assert_eq!(
                listed(&v),
                expected(f, false),
                "{} without {tags:x?}",
                f.file
            );
            for &(name, version) in f.symbols {
                let sym = v
                    .lookup(name, Some(version))
                    .expect("found without versions");
                assert_eq!(sym.version, None);
            }
        }
    }
}

/// The architecture this process's own images are named after (`<arch>.so`, and
/// `kernels/<arch>-linux-<release>.so`).
fn native_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86" => "i686",
        "x86_64" => "x86_64",
        "aarch64" => "aarch64",
        "arm" => "arm",
        "riscv64" => "riscv64",
        "s390x" => "s390x",
        "powerpc64" if cfg!(target_endian = "little") => "powerpc64le",
        _ => "",
    }
}

/// Whether `f` is an image of this process's own architecture.
fn is_native(f: &Fixture) -> bool {
    let name = f.file.trim_start_matches("kernels/");
    let arch = native_arch();
    !arch.is_empty()
        && (name == format!("{arch}.so") || name.starts_with(&format!("{arch}-linux-")))
}

/// A foreign `e_machine` parses (the parser is for any image) but matches no table, and
/// is refused as this process's vDSO; an image of another known arch gets that arch's
/// table and is refused too. Only the image of this process's own arch is accepted.
#[test]
fn foreign_machines_parse_but_are_not_native() {
    for f in fixture_data::all() {
        let mut elf = Elf::new(&load(f.file));
        // SAFETY: the copy is page-aligned, at least 4 KiB long and leaked, so it stays
        // mapped and unchanged for the life of the process.
        let own = unsafe { Vdso::from_address(leak_page_aligned(&elf.bytes)) };
        if is_native(f) {
            let v = own.expect("the native fixture is accepted");
            assert!(v.is_native());
            assert_eq!(v.arch(), Some(arch::NATIVE));
        } else {
            let foreign = ElfError::ForeignMachine {
                machine: f.machine,
                class: f.class,
            };
            assert_eq!(own.err(), Some(foreign), "{}", f.file);
        }

        elf.set_machine(0x1234);
        let v = Vdso::parse(&elf.bytes).expect("an unknown machine still parses");
        assert_eq!(
            (v.machine(), v.arch(), v.is_native()),
            (0x1234, None, false)
        );
        assert_eq!(listed(&v), expected(f, true), "{}", f.file);
        // SAFETY: as above.
        let own = unsafe { Vdso::from_address(leak_page_aligned(&elf.bytes)) };
        let foreign = ElfError::ForeignMachine {
            machine: 0x1234,
            class: f.class,
        };
        assert_eq!(own.err(), Some(foreign), "{}", f.file);
    }
    // x86_64's image claiming to be arm64: arm64's table, none of whose symbols exist.
    let mut elf = Elf::new(&load("x86_64.so"));
    elf.set_machine(183);
    let v = Vdso::parse(&elf.bytes).expect("parses");
    assert_eq!(v.arch(), Some(&arch::AARCH64));
    assert_eq!(
        v.lookup("__kernel_clock_gettime", Some("LINUX_2.6.39")),
        None
    );
}
