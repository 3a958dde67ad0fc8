//! Every input the fuzzer ever crashed on (fuzz/regressions/) is parsed again here: it must
//! give `Err` or an image that passes the consistency checks. Add new crash inputs there.

mod reliability_common;

use reliability_common::consistency::check_parsed;
use vdsotime::Vdso;

#[test]
fn fuzz_regression_inputs() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_none_or(|x| x != "md"))
        .collect();
    files.sort();
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let label = path.file_name().unwrap().to_string_lossy();
        match Vdso::parse(&bytes) {
            Ok(v) => {
                check_parsed(&bytes, &v).unwrap_or_else(|e| panic!("{label}: {e}"));
                println!("{label}: accepted, consistent");
            }
            Err(e) => println!("{label}: {e}"),
        }
    }
    println!("{} regression inputs", files.len());
}
