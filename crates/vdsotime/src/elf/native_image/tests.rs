//! The reader in this process's layout ([`Native`]), the one a first call runs, against
//! the general one ([`crate::Vdso`]) on the running vDSO and the fixtures, and on
//! truncated and mutated images.
#![allow(clippy::arithmetic_side_effects)] // test counters and offsets in images it read

use super::super::reader::{Any, Form, Reader, Refused};
use super::super::{Header, DT_GNU_HASH, DT_HASH, DT_NULL, DT_SYMTAB, DT_VERDEF, DT_VERSYM};
use super::*;
use crate::arch;
use crate::elf::ElfError;
use crate::Vdso;
use std::collections::BTreeSet;
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

/// `bytes` located in the form `F`, as the first call sizes and opens the live image:
/// the header and program headers, then the tables in the length they give.
fn open<F: Form>(bytes: &[u8]) -> Result<Image<'_, F>, F::Error> {
    let header = Header::<F>::parse(bytes)?;
    let (load, len) = header.extent(bytes)?;
    let bytes = bytes.get(..len).ok_or(ElfError::OutOfBounds("image"))?;
    Image::open(header, load, bytes)
}

/// The native reader on `bytes`, at their own address.
fn native(bytes: &[u8]) -> Result<NativeImage<'_>, Refused> {
    Ok(NativeImage::new(
        open::<Native>(bytes)?,
        bytes.as_ptr() as usize,
    ))
}

/// Every symbol the general reader lists, and names and versions it does not have,
/// are found (or not) alike by both readers. Returns how many lookups agreed.
fn assert_agree<'a>(v: &Vdso<'a>, n: &NativeImage<'_>, what: &str) -> usize {
    let table = arch::NATIVE;
    let mut names: Vec<&'a str> = v.symbols().map(|s| s.name).collect();
    names.extend(table.symbols().map(|s| -> &'a str { s }));
    names.extend(["__vdso_nothing", "", "clock_gettime"]);
    let mut versions: Vec<&'a str> = v.symbols().filter_map(|s| s.version).collect();
    versions.extend([table.version, "LINUX_0.0", ""]);
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
    let image = open::<Any>(bytes).expect("an image");
    let r = image.r;
    let mut entry = dynamic_of(&image);
    let word = r.pick(4, 8);
    while let Ok(t) = r.word(entry, "tag") {
        if t == tag {
            let debug = match word {
                4 => (DT_DEBUG as u32).to_ne_bytes().to_vec(),
                _ => (DT_DEBUG as u64).to_ne_bytes().to_vec(),
            };
            out[entry..entry + word].copy_from_slice(&debug);
        }
        if t == DT_NULL {
            break;
        }
        entry += 2 * word;
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
                native(&bytes).is_err() && open::<Any>(&bytes).is_ok(),
                "{what}: a foreign image is refused in this layout only"
            );
            continue;
        }
        native_images += 1;
        let n = native(&bytes).unwrap_or_else(|e| panic!("{what}: {e:?}"));
        checked += assert_agree(&v, &n, &std::format!("{what}"));
        // The other hash table alone, and no versions.
        for tag in [DT_GNU_HASH, DT_HASH, DT_VERSYM] {
            let patched = without(&bytes, tag);
            let (Ok(v), Ok(n)) = (Vdso::parse(&patched), native(&patched)) else {
                assert!(Vdso::parse(&patched).is_err() && native(&patched).is_err());
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

/// The tables of `image` held in only the first `len` of its bytes: every read past
/// them must be refused, wherever in a table it falls.
fn cut<F: Form>(image: Image<'_, F>, len: usize) -> Image<'_, F> {
    Image {
        r: Reader {
            bytes: &image.r.bytes[..len],
            form: image.r.form,
        },
        ..image
    }
}

/// Looks up every native symbol in `image` cut at every length: each lookup finds what
/// the whole image gives or is refused with an error (never a panic or a read past the
/// end), and the two instantiations agree. Returns the tables whose bounds were reached.
fn truncations(bytes: &[u8]) -> BTreeSet<&'static str> {
    let native = open::<Native>(bytes).unwrap();
    let any = open::<Any>(bytes).unwrap();
    let version = Some(arch::NATIVE.version);
    let mut reached = BTreeSet::new();
    for name in arch::NATIVE.symbols() {
        let whole = native.lookup(name, version, 0).unwrap();
        for len in 0..native.r.bytes.len() {
            let got = cut(any, len).lookup(name, version, 0);
            let native_got = cut(native, len).lookup(name, version, 0);
            assert_eq!(native_got.ok(), got.ok(), "{name} at {len}");
            match got {
                Ok(found) => assert!(found == whole || found.is_none(), "{name} at {len}"),
                Err(ElfError::OutOfBounds(what)) => {
                    reached.insert(what);
                }
                Err(e) => panic!("{name} at {len}: {e}"),
            }
        }
    }
    reached
}

/// `bytes` with the table at `at` (`len` bytes) copied to a new end of the image, the
/// dynamic entry `tag` pointing at the copy and the loaded segment grown to hold it: a
/// truncation inside the copy leaves every other table and the code whole.
fn moved_to_end(bytes: &[u8], tag: u64, at: usize, len: usize) -> Vec<u8> {
    let image = open::<Native>(bytes).unwrap();
    let (r, load) = (image.r, image.load);
    let mut out = bytes[..r.bytes.len()].to_vec();
    while out.len() % 8 != 0 {
        out.push(0);
    }
    let new = out.len();
    out.extend_from_slice(&bytes[at..at + len]);
    let put = |out: &mut Vec<u8>, off: usize, v: u64| match r.pick(4, 8) {
        4 => out[off..off + 4].copy_from_slice(&(v as u32).to_ne_bytes()),
        _ => out[off..off + 8].copy_from_slice(&v.to_ne_bytes()),
    };
    let grown = (out.len() as u64) - load.offset;
    let mut first = true;
    image
        .header
        .each_phdr(&r, |p_type, ph| {
            let ph = ph.bytes.as_ptr() as usize - r.bytes.as_ptr() as usize;
            if p_type == 1 && first {
                first = false;
                put(&mut out, ph + r.pick(16, 32), grown);
                put(&mut out, ph + r.pick(20, 40), grown);
            }
            Ok(())
        })
        .unwrap();
    let word = r.pick(4, 8);
    let mut entry = dynamic_of(&image);
    while let Ok(t) = r.word(entry, "tag") {
        if t == tag {
            put(
                &mut out,
                entry + word,
                load.vaddr + (new as u64 - load.offset),
            );
        }
        if t == DT_NULL {
            break;
        }
        entry += 2 * word;
    }
    out
}

/// The offset of the dynamic table of `image`.
fn dynamic_of<F: Form>(image: &Image<'_, F>) -> usize {
    image.load.dynamic.unwrap() as usize
}

/// How many bytes the version definitions at `def` take, entries and names' aux entries.
fn verdef_len<F: Form>(image: &Image<'_, F>, mut def: usize) -> usize {
    let (r, start) = (image.r, def);
    let mut end = def;
    for _ in 0..16 {
        let aux = r.u32(def + 12, "vd_aux").unwrap() as usize;
        end = end.max(def + 20).max(def + aux + 8);
        let next = r.u32(def + 16, "vd_next").unwrap() as usize;
        if next == 0 {
            break;
        }
        def += next;
    }
    end - start
}

#[test]
fn truncated_tables_are_refused_inside_every_table() {
    let Some(v) = crate::vdso() else {
        skip_without_vdso("truncated_tables_are_refused_inside_every_table");
        return;
    };
    let bytes = v.bytes();
    let mut reached = truncations(bytes);
    let sysv = without(bytes, DT_GNU_HASH);
    if open::<Native>(&sysv).is_ok_and(|i| i.sysv_hash.is_some()) {
        reached.extend(truncations(&sysv));
    }
    let image = open::<Native>(bytes).unwrap();
    let nsyms = image.check().unwrap();
    // Where the linker put the symbol table before the hash tables (QEMU's s390x vDSO), a
    // cut inside it also cuts them, and their bound is met first: the table is moved too.
    reached.extend(truncations(&moved_to_end(
        bytes,
        DT_SYMTAB,
        image.symtab,
        nsyms * image.syment,
    )));
    if let (Some(versym), Some(verdef)) = (image.versym, image.verdef) {
        reached.extend(truncations(&moved_to_end(
            bytes,
            DT_VERSYM,
            versym,
            2 * nsyms,
        )));
        let len = verdef_len(&image, verdef);
        reached.extend(truncations(&moved_to_end(bytes, DT_VERDEF, verdef, len)));
    }
    std::println!("bounds reached: {reached:?}");
    let mut expected = std::vec!["symbol"];
    if v.has_gnu_hash() {
        expected.extend(["DT_GNU_HASH", "DT_GNU_HASH buckets", "DT_GNU_HASH chains"]);
    }
    if v.has_sysv_hash() {
        expected.push("DT_HASH");
    }
    if v.has_versions() {
        expected.extend(["DT_VERSYM", "DT_VERDEF", "verdaux"]);
    }
    for table in expected {
        assert!(
            reached.contains(table),
            "no truncation reached {table}: {reached:?}"
        );
    }
}

/// Every byte of the running image set to 0, 0xff or flipped: the reader in this
/// process's layout gives a value or an error, never a panic (an index or an overflow)
/// or a read past the end. It refuses only images the general reader refuses too, so
/// that a first call that falls back to the general reader gets the same verdict; where
/// both accept, they find the same symbols.
#[test]
fn a_mutated_image_never_panics_and_is_refused_by_both_readers_alike() {
    let Some(v) = crate::vdso() else {
        skip_without_vdso("a_mutated_image_never_panics_and_is_refused_by_both_readers_alike");
        return;
    };
    let names: Vec<&str> = arch::NATIVE.symbols().collect();
    let version = arch::NATIVE.version;
    let mut bytes = v.bytes().to_vec();
    let (mut found, mut refused) = (0usize, 0usize);
    for at in 0..bytes.len() {
        let original = bytes[at];
        for value in [0, 0xff, original ^ 0x80] {
            bytes[at] = value;
            // What the general reading of a live image (`Vdso::from_address`) decides:
            // located, counted, checked whole, and of this process's layout.
            let general = open::<Any>(&bytes)
                .and_then(|i| i.check().map(|_| i))
                .ok()
                .filter(|i| {
                    i.header.class() == Native::CLASS
                        && i.header.endian() == Native::ENDIAN
                        && i.header.machine == arch::NATIVE.machine
                });
            match native(&bytes) {
                Ok(n) => {
                    for name in &names {
                        let got = n.lookup(name, version);
                        found += usize::from(got.is_some());
                        if let Some(g) = general {
                            let want = g.lookup(name, Some(version), bytes.as_ptr() as usize);
                            let want = want.ok().flatten();
                            assert_eq!(got, want.map(|s| (s.address, s.version.is_some())));
                        }
                    }
                }
                Err(e) => {
                    refused += 1;
                    assert!(
                        general.is_none(),
                        "byte {at} = {value:#x}: refused ({e:?}) in this layout only"
                    );
                }
            }
        }
        bytes[at] = original;
    }
    assert!(found > 0, "most mutations leave the symbols found");
    assert!(refused > 0, "some mutations are refused");
}

/// Every input the fuzzer ever crashed or hung on (`fuzz/regressions/`) opened in this
/// process's layout as the fuzz target opens it (the first load segment, the bytes as
/// they are), and every native symbol looked up in it. A lookup must end: a SysV chain
/// that loops, in an image whose `nchain` lies far past its symbol table, was once
/// walked `nchain` times (minutes). The guard is a hang's, not a speed limit: a lookup
/// takes microseconds.
#[test]
fn every_fuzz_regression_input_is_looked_up_to_an_end() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "bin"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no inputs in {}", dir.display());
    for path in files {
        let bytes = std::fs::read(&path).unwrap();
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let found = Header::<Native>::parse(&bytes)
                .and_then(|h| Ok((h, h.first_load(&h.reader(&bytes))?)))
                .and_then(|(h, load)| Image::open(h, load, &bytes))
                .map(|image| {
                    let n = NativeImage::new(image, bytes.as_ptr() as usize);
                    let table = arch::NATIVE;
                    table
                        .symbols()
                        .filter(|name| n.lookup(name, table.version).is_some())
                        .count()
                });
            let _ = done.send(found.map_err(|_| ()));
        });
        let label = path.file_name().unwrap().to_string_lossy().into_owned();
        match finished.recv_timeout(std::time::Duration::from_secs(10)) {
            Ok(found) => std::println!("{label}: {found:?} native symbols found"),
            Err(_) => panic!("{label}: the native reader's lookups did not end in 10 s"),
        }
    }
}
