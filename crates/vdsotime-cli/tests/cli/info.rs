use crate::*;

#[test]
fn info_json_describes_the_vdso() {
    let v = json(&["info"], 0);
    let sys = &v["system"];
    assert!(!sys["kernel_release"].as_str().unwrap().is_empty());
    let page = positive(&sys["page_size"], "page_size") as u64;
    assert!(page.is_power_of_two());
    positive(&sys["cpus"], "cpus");
    assert!(sys["cpu_flags"]["known"].is_boolean());
    assert!(sys["timens_offsets"].is_array());
    let vdso = &v["vdso"];
    assert!(vdso.is_object(), "this test machine has a vDSO");
    let addr = vdso["address"].as_str().unwrap();
    assert!(u64::from_str_radix(addr.trim_start_matches("0x"), 16).unwrap() > 0);
    positive(&vdso["size"], "vdso.size");
    assert!(matches!(vdso["class"].as_str(), Some("ELF32" | "ELF64")));
    positive(&vdso["machine"], "machine");
    assert!(vdso["gnu_hash"].as_bool().unwrap() || vdso["sysv_hash"].as_bool().unwrap());
    let syms = vdso["symbols"].as_array().unwrap();
    assert!(
        syms.iter().any(|s| s["name"] == clock_gettime_symbol()),
        "{syms:?}"
    );
    for s in syms {
        assert!(!s["name"].as_str().unwrap().is_empty());
        positive(&s["offset"], "symbol offset");
    }
    let paths = v["paths"].as_array().unwrap();
    assert_eq!(paths.len(), 26, "11 clock_gettime + 11 clock_getres + 4");
    for p in paths {
        let path = p["path"].as_str().unwrap();
        // getcpu is answered from glibc's rseq area where glibc registered one.
        let rseq = p["function"] == "getcpu" && path == "rseq area (glibc)";
        assert!(path == "syscall" || path.contains('@') || rseq, "{path}");
    }
    let cg = paths
        .iter()
        .find(|p| p["function"] == "clock_gettime" && p["clock"] == "CLOCK_MONOTONIC")
        .unwrap();
    assert!(
        cg["path"]
            .as_str()
            .unwrap()
            .starts_with(clock_gettime_symbol()),
        "{cg}"
    );
}

/// The vDSO's getrandom, where the image exports it: the symbol, and the state
/// parameters its probe call reports (this kernel: MAP_DROPPABLE memory).
#[test]
fn info_describes_getrandom_where_the_vdso_has_it() {
    let v = json(&["info"], 0);
    let exported = v["vdso"]["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["name"] == "__vdso_getrandom" || s["name"] == "__kernel_getrandom");
    let g = &v["getrandom"];
    let path = v["paths"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["function"] == "getrandom")
        .expect("a getrandom path")["path"]
        .as_str()
        .unwrap()
        .to_string();
    if !exported || cfg!(target_pointer_width = "32") {
        assert!(g.is_null(), "{g}");
        assert_eq!(path, "syscall");
        return;
    }
    assert!(path.contains("getrandom@"), "{path}");
    assert_eq!(g["symbol"], path.as_str());
    let size = positive(&g["state_size"], "state_size") as u64;
    let page = positive(&g["page_size"], "page_size") as u64;
    let per_page = positive(&g["states_per_page"], "states_per_page") as u64;
    assert!(per_page * size <= page, "{g}");
    assert!(
        g["mmap_names"].as_str().unwrap().contains("MAP_DROPPABLE"),
        "{g}"
    );
    let (code, out, err) = parts(&run(&["info"]));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!("getrandom: {path}, {size}-byte states")),
        "{out}"
    );
}

#[test]
fn info_symbols_match_readelf() {
    let d = scratch("info-readelf");
    let img = d.join("vdso.so");
    let (c, _, err) = parts(&run(&["dump", "-o", img.to_str().unwrap()]));
    assert_eq!(c, 0, "{err}");
    let re = process::output(
        std::process::Command::new("readelf")
            .args(["-W", "--dyn-syms"])
            .arg(&img),
        LIMIT,
    );
    let table = String::from_utf8_lossy(&re.stdout);
    let v = json(&["info"], 0);
    for s in v["vdso"]["symbols"].as_array().unwrap() {
        let name = s["name"].as_str().unwrap();
        let line = table
            .lines()
            .find(|l| {
                l.split_whitespace()
                    .last()
                    .is_some_and(|n| n.split('@').next() == Some(name))
            })
            .unwrap_or_else(|| panic!("readelf does not list {name}:\n{table}"));
        let value = u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap();
        // readelf shows the link-time address; the vDSO is linked at 0, so it is the offset.
        assert_eq!(value, s["offset"].as_u64().unwrap(), "{name}: {line}");
        if let Some(ver) = s["version"].as_str() {
            assert!(line.contains(ver), "{name} version {ver} not in: {line}");
        }
    }
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn info_text_lists_symbols_and_paths() {
    let (c, out, err) = parts(&run(&["info"]));
    assert_eq!(c, 0, "{err}");
    assert!(out.contains("vDSO:"), "{out}");
    assert!(out.contains(clock_gettime_symbol()));
    assert!(out.contains("clocksource:"));
    assert!(out.contains("clock_gettime(MONOTONIC)"), "{out}");
}

/// `info` names clocks as `bench` and `doctor` do (`MONOTONIC_RAW`), and its JSON
/// keeps the full names (`CLOCK_MONOTONIC_RAW`) as theirs do.
#[test]
fn info_names_clocks_as_bench_and_doctor_do() {
    let (c, out, err) = parts(&run(&["info"]));
    assert_eq!(c, 0, "{err}");
    assert!(out.contains("clock_gettime(MONOTONIC_RAW)"), "{out}");
    assert!(!out.contains("(CLOCK_"), "{out}");
    let v = json(&["info"], 0);
    let clocks: Vec<&str> = v["paths"]
        .as_array()
        .expect("paths")
        .iter()
        .filter_map(|p| p["clock"].as_str())
        .collect();
    assert!(clocks.contains(&"CLOCK_MONOTONIC_RAW"), "{clocks:?}");
}
