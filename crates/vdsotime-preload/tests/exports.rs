//! What the built libvdsotime_preload.so presents to the dynamic linker: its own SONAME
//! (not libvdsotime's: a program linked with `-lvdsotime` must still find the real
//! library under the preload, and `ldconfig` must not point `libvdsotime.so.0` at it),
//! and exactly the names of `src/exports.rs` as dynamic symbols, which must also be
//! exactly the `#[no_mangle]` functions of the crate's source.

mod support;

use std::collections::BTreeSet;
use std::process::Command;

#[allow(dead_code)] // the table's documentation is for the library
#[path = "../src/exports.rs"]
mod exports;

fn tool(program: &str, args: &[&str]) -> String {
    let out = support::process::run(
        Command::new(program).args(args),
        std::time::Duration::from_secs(60),
    )
    .unwrap_or_else(|e| panic!("run {program} (binutils): {e}"));
    assert!(out.status.success(), "{program} {args:?}: {out:?}");
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// The table's names for this target, or for every target.
fn table(all_targets: bool) -> BTreeSet<String> {
    exports::names(all_targets)
        .map(|name| name.to_str().expect("ASCII name").to_owned())
        .collect()
}

#[test]
fn the_preload_has_its_own_soname() {
    let dynamic = tool("readelf", &["-d", support::preload().to_str().unwrap()]);
    let sonames: Vec<&str> = dynamic.lines().filter(|l| l.contains("(SONAME)")).collect();
    assert_eq!(sonames.len(), 1, "{dynamic}");
    assert!(
        sonames[0].ends_with("Library soname: [libvdsotime_preload.so]"),
        "{}",
        sonames[0]
    );
}

#[test]
fn it_exports_exactly_the_names_of_the_table() {
    let symbols = tool(
        "nm",
        &["-D", "--defined-only", support::preload().to_str().unwrap()],
    );
    // "<address> <type> <name>": every defined dynamic symbol, whatever its type.
    let exported: BTreeSet<String> = symbols
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .map(|name| name.split('@').next().unwrap_or(name).to_owned())
        .collect();
    assert_eq!(exported, table(false), "nm -D against src/exports.rs");
}

#[test]
fn the_table_names_every_no_mangle_function_of_the_source() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut defined = BTreeSet::new();
    // Every source file, in src/ and its module directories.
    let mut files = Vec::new();
    let mut dirs = vec![src];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if line.trim() != "#[no_mangle]" {
                continue;
            }
            let item = lines
                .by_ref()
                .find(|l| l.contains(" fn "))
                .unwrap_or_else(|| panic!("{}: #[no_mangle] without a fn", path.display()));
            let name = item
                .split(" fn ")
                .nth(1)
                .unwrap()
                .split('(')
                .next()
                .unwrap();
            defined.insert(name.trim().to_owned());
        }
    }
    assert_eq!(
        defined,
        table(true),
        "#[no_mangle] functions against src/exports.rs"
    );
}
