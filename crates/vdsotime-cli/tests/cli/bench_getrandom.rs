use crate::*;

/// `bench-getrandom --json`: every size through every path, each row with its function,
/// byte count and a positive time; nothing here asserts a speed.
#[test]
fn bench_getrandom_json_has_every_size_and_path() {
    let v = json(
        &[
            "bench-getrandom",
            "--trials",
            "1",
            "--calls",
            "200",
            "--first-call-runs",
            "2",
            "--fresh-rounds",
            "3",
        ],
        0,
    );
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
    // The crossover: a measured size on each side, or none up to the largest.
    let c = &v["crossover"];
    if route == "syscall" {
        assert!(c.is_null(), "{c}");
    } else {
        assert_eq!(c["largest_bytes"], 4096, "{c}");
        let measured =
            |k: &str| c[k].is_null() || [4, 16, 64, 256, 4096].contains(&c[k].as_u64().unwrap());
        assert!(
            measured("syscall_faster_from_bytes") && measured("vdso_faster_up_to_bytes"),
            "{c}"
        );
        if let (Some(below), Some(from)) = (
            c["vdso_faster_up_to_bytes"].as_u64(),
            c["syscall_faster_from_bytes"].as_u64(),
        ) {
            assert!(below < from, "{c}");
        }
    }
    check_first_calls(
        &v["first_call"],
        2,
        "getrandom-syscall",
        &["getrandom-vdsotime", "getrandom-glibc", "getrandom-syscall"],
        &["getrandom-vdsotime", "getrandom-syscall"],
    );
    for key in ["fresh_thread", "fork_draw_exit_wait"] {
        let f = &v[key];
        assert_eq!(f["rounds"], 3, "{key}: {f}");
        let paths: Vec<&str> = f["paths"]
            .as_array()
            .unwrap_or_else(|| panic!("{key}: {f}"))
            .iter()
            .map(|p| {
                positive(&p["min_ns"], "min_ns");
                positive(&p["ratio_to_syscall"], "ratio_to_syscall");
                p["path"].as_str().unwrap()
            })
            .collect();
        assert_eq!(paths, ["vdsotime", "libc", "syscall"], "{key}");
    }
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
        "--first-call-runs",
        "1",
        "--fresh-rounds",
        "1",
    ]));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("| 16 "), "{out}");
    assert!(out.contains("syscall/vdsotime"), "{out}");
    assert!(out.contains("\ncrossover: "), "{out}");
    assert!(
        out.contains("first getrandom of 16 bytes in a fresh process: 1 rounds"),
        "{out}"
    );
    for path in ["getrandom-vdsotime", "getrandom-glibc", "getrandom-syscall"] {
        assert!(out.contains(&format!("| {path} ")), "{path}: {out}");
    }
    for title in [
        "first getrandom of 16 bytes in a fresh thread: 1 rounds",
        "fork + one 16-byte getrandom in the child + exit + wait: 1 rounds",
    ] {
        assert!(out.contains(title), "{title}: {out}");
    }
    // Usage errors: sysexits' EX_USAGE, as for every subcommand.
    let (code, _, err) = parts(&run(&["bench-getrandom", "--bytes", "0"]));
    assert_eq!(code, 64, "{err}");
    let (code, _, err) = parts(&run(&["bench-getrandom", "--bytes", "4097"]));
    assert_eq!(code, 64, "{err}");
}
