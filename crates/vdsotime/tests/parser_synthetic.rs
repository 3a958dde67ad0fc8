//! The parser on synthetic images of every shape a vDSO takes, and on malformed ones.
//! Every malformed image must give an error value: never a panic, never a read outside.

mod support;

use support::elf_builder::{build, Spec, FUNC_LOCAL, NOTYPE_GLOBAL, OBJECT_GLOBAL};
use vdsotime::{ElfClass, ElfError, Endian, Vdso};

fn names(v: &Vdso<'_>) -> Vec<String> {
    let mut n: Vec<String> = v
        .symbols()
        .map(|s| format!("{}@{}", s.name, s.version.unwrap_or("-")))
        .collect();
    n.sort();
    n
}

/// Every shape: both classes, both byte orders, each hash table alone, with a bias.
#[test]
fn every_class_order_and_hash_table() {
    for elf64 in [false, true] {
        for big_endian in [false, true] {
            for (sysv, gnu) in [(true, true), (true, false), (false, true)] {
                for vaddr in [0u64, 0xffff_f000] {
                    let spec = Spec {
                        elf64,
                        big_endian,
                        sysv_hash: sysv,
                        gnu_hash: gnu,
                        vaddr,
                        ..Spec::x86_64_like()
                    };
                    let (bytes, layout) = build(&spec);
                    let v = Vdso::parse(&bytes).unwrap_or_else(|e| panic!("{spec:?}: {e}"));
                    assert_eq!(
                        v.class(),
                        if elf64 {
                            ElfClass::Elf64
                        } else {
                            ElfClass::Elf32
                        }
                    );
                    assert_eq!(
                        v.endian(),
                        if big_endian {
                            Endian::Big
                        } else {
                            Endian::Little
                        }
                    );
                    assert_eq!(
                        (v.has_sysv_hash(), v.has_gnu_hash(), v.has_versions()),
                        (sysv, gnu, true)
                    );
                    assert_eq!(v.symbols().count(), spec.symbols.len(), "{spec:?}");
                    for (i, name) in layout.order.iter().enumerate() {
                        let s = v
                            .lookup(name, Some("LINUX_2.6"))
                            .unwrap_or_else(|| panic!("{name} in {spec:?}"));
                        assert_eq!(s.offset, layout.code[i], "{name}");
                        assert_eq!(s.address, bytes.as_ptr() as usize + layout.code[i]);
                        assert_eq!(s.version, Some("LINUX_2.6"));
                    }
                    assert!(v.lookup("__vdso_nonexistent", None).is_none());
                    assert!(
                        v.lookup("__vdso_time", Some("LINUX_9.9")).is_none(),
                        "wrong version must not match"
                    );
                }
            }
        }
    }
}

#[test]
fn no_versions_matches_any_requested_version() {
    let spec = Spec {
        versioned: false,
        ..Spec::x86_64_like()
    };
    let (bytes, _) = build(&spec);
    let v = Vdso::parse(&bytes).unwrap();
    assert!(!v.has_versions());
    let s = v.lookup("__vdso_clock_gettime", Some("LINUX_2.6")).unwrap();
    assert_eq!(s.version, None);
    assert!(names(&v).iter().all(|n| n.ends_with("@-")));
}

#[test]
fn symbol_of_another_version_is_not_returned_for_this_one() {
    let mut spec = Spec::x86_64_like();
    spec.versions = vec!["LINUX_2.6", "LINUX_4.15"];
    spec.symbols = vec![("__vdso_clock_gettime", 3, 0x12), ("__vdso_time", 2, 0x12)];
    let (bytes, _) = build(&spec);
    let v = Vdso::parse(&bytes).unwrap();
    assert!(v
        .lookup("__vdso_clock_gettime", Some("LINUX_2.6"))
        .is_none());
    assert_eq!(
        v.lookup("__vdso_clock_gettime", Some("LINUX_4.15"))
            .unwrap()
            .version,
        Some("LINUX_4.15")
    );
    assert_eq!(
        v.lookup("__vdso_clock_gettime", None).unwrap().version,
        Some("LINUX_4.15")
    );
}

#[test]
fn only_defined_global_functions_are_symbols() {
    let mut spec = Spec::x86_64_like();
    spec.symbols = vec![
        ("__kernel_clock_gettime", 2, NOTYPE_GLOBAL), // ppc64 style: accepted
        ("local_helper", 2, FUNC_LOCAL),
        ("some_object", 2, OBJECT_GLOBAL),
    ];
    let (bytes, _) = build(&spec);
    let v = Vdso::parse(&bytes).unwrap();
    assert_eq!(names(&v), ["__kernel_clock_gettime@LINUX_2.6"]);
    assert!(v.lookup("local_helper", None).is_none());
    assert!(v.lookup("some_object", None).is_none());
}

#[test]
fn s390x_sysv_hash_has_64_bit_words() {
    let spec = Spec {
        machine: 22,
        big_endian: true,
        gnu_hash: false,
        ..Spec::x86_64_like()
    };
    let (bytes, _) = build(&spec);
    let v = Vdso::parse(&bytes).unwrap();
    assert_eq!(v.arch().unwrap().name, "s390x");
    assert!(v.lookup("__vdso_getcpu", Some("LINUX_2.6")).is_some());
    assert_eq!(v.symbols().count(), spec.symbols.len());
}

#[test]
fn foreign_machine_parses_but_is_not_native() {
    let spec = Spec {
        machine: 0x1234,
        ..Spec::x86_64_like()
    };
    let (bytes, _) = build(&spec);
    let v = Vdso::parse(&bytes).unwrap();
    assert_eq!(v.machine(), 0x1234);
    assert!(v.arch().is_none());
    assert!(!v.is_native());
}

#[test]
fn header_errors_are_specific() {
    let (good, _) = build(&Spec::x86_64_like());
    let with = |at: usize, byte: u8| {
        let mut b = good.clone();
        b[at] = byte;
        Vdso::parse(&b).unwrap_err()
    };
    assert_eq!(with(0, b'X'), ElfError::BadMagic);
    assert_eq!(with(4, 3), ElfError::BadClass(3));
    assert_eq!(with(5, 0), ElfError::BadByteOrder(0));
    assert_eq!(with(6, 2), ElfError::BadVersion);
    assert_eq!(with(16, 2), ElfError::NotSharedObject(2));
    assert_eq!(with(54, 55), ElfError::BadEntrySize("e_phentsize"));
    assert_eq!(Vdso::parse(&good[..40]).unwrap_err(), ElfError::TooShort);
}

#[test]
fn table_errors_are_specific() {
    let (good, l) = build(&Spec::x86_64_like());
    let patch = |at: usize, v: u64| {
        let mut b = good.clone();
        b[at..at + 8].copy_from_slice(&v.to_le_bytes());
        Vdso::parse(&b).map(|_| ())
    };
    // No PT_LOAD / PT_DYNAMIC: change the p_type of each.
    let mut b = good.clone();
    b[l.phoff] = 9;
    assert_eq!(Vdso::parse(&b).unwrap_err(), ElfError::NoLoadSegment);
    let mut b = good.clone();
    b[l.phoff + 56] = 9;
    assert_eq!(Vdso::parse(&b).unwrap_err(), ElfError::NoDynamicSegment);
    // e_phoff far past the end.
    // (On a 32-bit host the offset itself does not fit in usize.)
    assert!(matches!(
        patch(32, 1 << 40).unwrap_err(),
        ElfError::OutOfBounds("program headers" | "e_phoff")
    ));
    assert!(matches!(
        patch(32, u64::MAX).unwrap_err(),
        ElfError::OutOfBounds(_)
    ));
    // PT_DYNAMIC offset past the end.
    assert_eq!(
        patch(l.phoff + 56 + 8, 1 << 30).unwrap_err(),
        ElfError::OutOfBounds("dynamic table")
    );
    // DT_STRTAB pointing outside the segment (the first dynamic entry's value).
    assert_eq!(
        patch(l.dynamic + 8, 1 << 30).unwrap_err(),
        ElfError::AddressOutsideSegment("DT_STRTAB")
    );
    // Drop DT_SYMTAB (second entry) by retagging it as an unknown tag.
    assert_eq!(
        patch(l.dynamic + 16, 0x7000_0000).unwrap_err(),
        ElfError::MissingDynamicEntry("DT_SYMTAB")
    );
    // A huge GNU bucket count runs out of the image.
    let gnu = l.gnu_hash.unwrap();
    let mut b = good.clone();
    b[gnu..gnu + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(
        Vdso::parse(&b).unwrap_err(),
        ElfError::OutOfBounds(_)
    ));
}

#[test]
fn no_hash_table_is_an_error() {
    let spec = Spec {
        sysv_hash: false,
        gnu_hash: false,
        ..Spec::x86_64_like()
    };
    let (bytes, _) = build(&spec);
    assert_eq!(Vdso::parse(&bytes).unwrap_err(), ElfError::NoHashTable);
}

#[test]
fn cyclic_sysv_chain_terminates() {
    let spec = Spec {
        gnu_hash: false,
        ..Spec::x86_64_like()
    };
    let (mut bytes, l) = build(&spec);
    let h = l.sysv_hash.unwrap();
    let nbucket = 3;
    let nsyms = spec.symbols.len() + 1;
    // Every chain link points back to symbol 1.
    for i in 0..nsyms {
        let at = h + 8 + 4 * nbucket + 4 * i;
        bytes[at..at + 4].copy_from_slice(&1u32.to_le_bytes());
    }
    let v = Vdso::parse(&bytes).unwrap();
    let _ = v.lookup("__vdso_absent", None); // must return, whatever it finds
}

#[test]
fn every_truncation_and_every_byte_flip_is_handled() {
    for spec in [
        Spec::x86_64_like(),
        Spec {
            elf64: false,
            big_endian: true,
            ..Spec::x86_64_like()
        },
    ] {
        let (good, _) = build(&spec);
        for len in 0..good.len() {
            if let Ok(v) = Vdso::parse(&good[..len]) {
                v.symbols().for_each(|s| assert!(s.offset < len));
            }
        }
        for at in 0..good.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut b = good.clone();
                b[at] ^= flip;
                if let Ok(v) = Vdso::parse(&b) {
                    for s in v.symbols() {
                        assert!(s.offset < b.len());
                        let found = v.lookup(s.name, s.version);
                        assert!(found.is_none_or(|f| f.name == s.name));
                    }
                }
            }
        }
    }
}

/// Issue 11's image: a PT_LOAD segment claiming `u64::MAX` bytes, so every address lies
/// "inside" it, and `DT_VERDEF = u64::MAX - 1`. It used to parse, and a versioned
/// `lookup` then computed `verdef + 2`: "attempt to add with overflow" in a debug build,
/// the ELF header read as a version definition in a release build. An address is now
/// bounded by the byte slice as well as by the segment.
#[test]
fn an_address_inside_a_huge_segment_but_past_the_bytes_is_refused() {
    let (mut bytes, l) = build(&Spec::x86_64_like());
    let put = |b: &mut Vec<u8>, at: usize, v: u64| b[at..at + 8].copy_from_slice(&v.to_le_bytes());
    put(&mut bytes, l.phoff + 32, u64::MAX); // PT_LOAD p_filesz
    put(&mut bytes, l.phoff + 40, u64::MAX); // PT_LOAD p_memsz
    let verdef_entry = (l.dynamic..)
        .step_by(16)
        .find(|&e| bytes[e..e + 8] == 0x6fff_fffc_u64.to_le_bytes())
        .expect("the builder writes DT_VERDEF");
    put(&mut bytes, verdef_entry + 8, u64::MAX - 1);

    let got = Vdso::parse(&bytes).map(|v| v.lookup("__vdso_time", Some("LINUX_2.6")));
    assert_eq!(got.unwrap_err(), ElfError::OutOfBounds("DT_VERDEF"));

    // The same image with an honest DT_VERDEF still parses: the huge segment alone is
    // no error, as long as every address read lies in the bytes.
    put(&mut bytes, verdef_entry + 8, l.verdef.unwrap() as u64);
    let v = Vdso::parse(&bytes).expect("only DT_VERDEF was wrong");
    assert!(v.lookup("__vdso_time", Some("LINUX_2.6")).is_some());
}
