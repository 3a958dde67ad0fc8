//! Structure-aware fuzzing of the ELF parser: the input is not the image but the fields
//! it is assembled from (`structured/image.rs`): counts, offsets, sizes and addresses
//! drawn near their honest values, near 0 and near the limits of their type, in ELF32 and
//! ELF64 of either byte order. Random bytes rarely get past the header; these images reach
//! the hash tables, symbol versions and address arithmetic. Run with debug assertions
//! (`cargo fuzz run -a`), so any arithmetic overflow in the parser is a crash. An accepted
//! image must pass every check of `consistency.rs`, and the reader's form a process's
//! first call uses must agree (`first_call.rs`).
//!
//! `VDSOTIME_FUZZ_DUMP=FILE cargo fuzz run -a structured CRASH` writes the image a crash
//! input builds, to keep under `fuzz/regressions/`.
#![no_main]

#[allow(dead_code)]
#[path = "../../crates/vdsotime/tests/reliability_common/consistency.rs"]
mod consistency;
#[path = "../../crates/vdsotime/tests/support/elf_builder.rs"]
mod elf_builder;
mod first_call;
mod structured {
    pub mod draw;
    pub mod image;
}

use structured::draw::Draw;
use vdsotime::Vdso;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut draw = Draw(arbitrary::Unstructured::new(data));
    let Ok(bytes) = structured::image::build(&mut draw) else {
        return;
    };
    if let Some(path) = std::env::var_os("VDSOTIME_FUZZ_DUMP") {
        std::fs::write(path, &bytes).expect("write the image");
    }
    let parsed = Vdso::parse(&bytes);
    first_call::check(&bytes, &parsed);
    match parsed {
        Ok(v) => {
            if let Err(violation) = consistency::check_parsed(&bytes, &v) {
                panic!("invariant violated: {violation}");
            }
        }
        Err(e) => assert!(!e.to_string().is_empty(), "{e:?} has an empty Display"),
    }
});
