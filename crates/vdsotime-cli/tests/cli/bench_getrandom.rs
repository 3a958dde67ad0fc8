use crate::*;

/// `bench-getrandom --json`: every size through every path, each row with its function,
/// byte count and a positive time; nothing here asserts a speed.
#[test]
fn bench_getrandom_json_has_every_size_and_path() {
    let v = json(&["bench-getrandom", "--trials", "1", "--calls", "200"], 0);
    let rows = v["rows"].as_array().unwrap();
    let paths = [
        "vdsotime",
        "vdso-state",
        "libc",
        "syscall",
        "getrandom-crate",
    ];
    for bytes in [4, 16, 64, 256, 4096] {
        for path in paths {
            let row = rows
                .iter()
                .find(|r| r["bytes"] == bytes && r["path"] == path)
                .unwrap_or_else(|| panic!("no row for {bytes} bytes through {path}"));
            assert_eq!(row["function"], "getrandom");
            positive(&row["ns"], "ns");
            assert_eq!(row["calls"], 200);
        }
    }
    let route = rows.iter().find(|r| r["path"] == "vdsotime").unwrap()["route"]
        .as_str()
        .unwrap();
    assert!(
        route == "syscall" || route.contains("getrandom@"),
        "{route}"
    );
}

#[test]
fn bench_getrandom_table_and_bad_sizes() {
    let (code, out, err) = parts(&run(&[
        "bench-getrandom",
        "--trials",
        "1",
        "--calls",
        "100",
        "--bytes",
        "16",
    ]));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("| 16 "), "{out}");
    assert!(out.contains("syscall/vdsotime"), "{out}");
    // Usage errors: sysexits' EX_USAGE, as for every subcommand.
    let (code, _, err) = parts(&run(&["bench-getrandom", "--bytes", "0"]));
    assert_eq!(code, 64, "{err}");
    let (code, _, err) = parts(&run(&["bench-getrandom", "--bytes", "4097"]));
    assert_eq!(code, 64, "{err}");
}
