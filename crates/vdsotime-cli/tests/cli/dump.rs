use crate::*;

#[test]
fn dump_is_an_elf_readelf_accepts() {
    let d = scratch("dump");
    let img = d.join("vdso.so");
    let v = json(&["dump", "-o", img.to_str().unwrap()], 0);
    let bytes = std::fs::read(&img).unwrap();
    assert_eq!(bytes.len() as u64, v["size"].as_u64().unwrap());
    assert_eq!(&bytes[..4], b"\x7fELF");
    let re = process::output(
        std::process::Command::new("readelf").arg("-Ws").arg(&img),
        LIMIT,
    );
    let out = String::from_utf8_lossy(&re.stdout);
    assert!(
        re.status.success(),
        "readelf failed: {}",
        String::from_utf8_lossy(&re.stderr)
    );
    assert!(out.contains(clock_gettime_symbol()), "{out}");
    let hdr = process::output(
        std::process::Command::new("readelf").arg("-h").arg(&img),
        LIMIT,
    );
    assert!(String::from_utf8_lossy(&hdr.stdout).contains("DYN"));
    // Without -o the same bytes go to standard output (a file here).
    let o = run(&["dump"]);
    assert!(o.status.success());
    assert_eq!(o.stdout, bytes);
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn dump_to_unwritable_path_fails() {
    let (c, _, err) = parts(&run(&["dump", "-o", "/nonexistent-dir/vdso.so"]));
    assert_eq!(c, 1);
    assert!(err.contains("/nonexistent-dir/vdso.so"), "{err}");
}
