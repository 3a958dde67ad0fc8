//! The lean reader against the general one, on the running vDSO and the fixtures, and
//! on truncated and mutated images.
#![allow(clippy::arithmetic_side_effects)] // test counters and offsets in images it read

use super::*;
use crate::Vdso;
use std::vec::Vec;

const DT_DEBUG: usize = 21;

/// Writes `SKIP <test>: <reason>` to the real standard error, where the harness does not
/// hide it (the line `tests/support/skip.rs` writes), or fails where `VDSOTIME_REQUIRE`
/// names `vdso`, what it lacks.
fn skip_without_vdso(test: &str) {
    let list = std::env::var("VDSOTIME_REQUIRE").unwrap_or_default();
    assert!(
        !list.split(',').any(|name| name.trim() == "vdso"),
        "{test}: vdso is required by VDSOTIME_REQUIRE but this process has none"
    );
    let line = std::format!("SKIP {test}: no vDSO (needs vdso)\n");
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
}

/// The lean reader on `bytes`, at their own address.
fn native(bytes: &[u8]) -> Option<NativeImage<'_>> {
    NativeImage::read(Layout::read(bytes)?, bytes, bytes.as_ptr() as usize)
}

/// Every symbol the general reader lists, and names and versions it does not have,
/// are found (or not) alike by both readers. Returns how many lookups agreed.
fn assert_agree<'a>(v: &Vdso<'a>, n: &NativeImage<'_>, what: &str) -> usize {
    let table = arch::NATIVE;
    let mut names: Vec<&'a str> = v.symbols().map(|s| s.name).collect();
    names.extend(table.symbols().map(|s| -> &'a str { s }));
    names.extend(["__vdso_nothing", "", "clock_gettime"]);
    let mut versions: Vec<&'a str> = v.symbols().filter_map(|s| s.version).collect();
    versions.extend([table.version, "LINUX_0.0"]);
    let mut checked = 0;
    for &name in &names {
        for &version in &versions {
            let general = v
                .lookup(name, Some(version))
                .map(|s| (s.address, s.version.is_some()));
            assert_eq!(n.lookup(name, version), general, "{what}: {name} {version}");
            checked += 1;
        }
    }
    checked
}

/// `bytes` with the dynamic entry `tag` turned into `DT_DEBUG` (ignored by both).
fn without(bytes: &[u8], tag: u64) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let mut entry = Layout::read(bytes).expect("native").dynamic;
    while let Some(t) = word_at(&out, entry) {
        if t as u64 == tag {
            out[entry..entry + WORD].copy_from_slice(&DT_DEBUG.to_ne_bytes());
        }
        if t as u64 == DT_NULL {
            break;
        }
        entry += 2 * WORD;
    }
    out
}

#[test]
fn finds_what_the_general_reader_finds_in_the_running_vdso() {
    let Some(v) = crate::vdso() else {
        skip_without_vdso("finds_what_the_general_reader_finds_in_the_running_vdso");
        return;
    };
    let n = native(v.bytes()).expect("the running vDSO reads");
    assert!(assert_agree(&v, &n, "running vDSO") > 0);
    let own = crate::vdso::own().expect("the process's own image");
    for name in arch::NATIVE.symbols() {
        assert_eq!(
            own.lookup(name, arch::NATIVE.version),
            n.lookup(name, arch::NATIVE.version)
        );
    }
}

#[test]
fn finds_what_the_general_reader_finds_in_every_native_fixture() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.extend(
        std::fs::read_dir(dir.join("kernels"))
            .unwrap()
            .map(|e| e.unwrap().path()),
    );
    let (mut native_images, mut checked) = (0, 0);
    for path in files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "so"))
    {
        let bytes = std::fs::read(path).unwrap();
        let what = path.display();
        let v = Vdso::parse(&bytes).unwrap();
        if !v.is_native() {
            assert!(
                Layout::read(&bytes).is_none(),
                "{what}: a foreign image is refused"
            );
            continue;
        }
        native_images += 1;
        let n = native(&bytes).unwrap_or_else(|| panic!("{what} reads"));
        checked += assert_agree(&v, &n, &std::format!("{what}"));
        // The other hash table alone, and no versions.
        for tag in [DT_GNU_HASH, DT_HASH, DT_VERSYM] {
            let patched = without(&bytes, tag);
            let (Ok(v), Some(n)) = (Vdso::parse(&patched), native(&patched)) else {
                assert!(Vdso::parse(&patched).is_err() && native(&patched).is_none());
                continue;
            };
            checked += assert_agree(&v, &n, &std::format!("{what} without {tag:#x}"));
        }
    }
    if native_images == 0 {
        let line = "SKIP finds_what_the_general_reader_finds_in_every_native_fixture: no fixture of this architecture\n";
        let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
    }
    std::println!("{native_images} native fixtures, {checked} lookups agreed");
}

#[test]
fn truncated_images_give_none_not_a_read_past_the_end() {
    let Some(v) = crate::vdso() else {
        skip_without_vdso("truncated_images_give_none_not_a_read_past_the_end");
        return;
    };
    let bytes = v.bytes();
    let name = arch::NATIVE
        .clock_gettime64
        .or(arch::NATIVE.clock_gettime)
        .unwrap();
    let layout = Layout::read(bytes).unwrap();
    for len in (0..layout.len()).step_by(7) {
        let short = &bytes[..len];
        let found = Layout::read(short)
            .and_then(|l| NativeImage::read(l, short, 0))
            .and_then(|n| n.lookup(name, arch::NATIVE.version));
        assert!(found.is_none(), "{len} bytes");
    }
}

/// Every byte of the running image set to 0, 0xff or flipped: the reader gives a
/// value or `None`, never a panic (an index or an overflow) or a read past the end.
#[test]
fn a_mutated_image_never_panics() {
    let Some(v) = crate::vdso() else {
        skip_without_vdso("a_mutated_image_never_panics");
        return;
    };
    let names: Vec<&str> = arch::NATIVE.symbols().collect();
    let mut bytes = v.bytes().to_vec();
    let mut found = 0usize;
    for at in 0..bytes.len() {
        let original = bytes[at];
        for value in [0, 0xff, original ^ 0x80] {
            bytes[at] = value;
            if let Some(n) = native(&bytes) {
                found += names
                    .iter()
                    .filter(|name| n.lookup(name, arch::NATIVE.version).is_some())
                    .count();
            }
        }
        bytes[at] = original;
    }
    assert!(found > 0, "most mutations leave the symbols found");
}
