//! Feeds arbitrary bytes to `Vdso::parse`; an accepted image must satisfy every invariant in
//! `consistency.rs` (symbols inside the image, lookups agreeing with `symbols()`, header
//! fields matching the bytes), and the result must not depend on the buffer's alignment.
//! The same bytes go through the reader's form a process's first call uses
//! (`first_call.rs`).
#![no_main]

// Shared with the mutation tests; the fuzz target uses only part of it.
#[allow(dead_code)]
#[path = "../../crates/vdsotime/tests/reliability_common/consistency.rs"]
mod consistency;
mod first_call;

use vdsotime::Vdso;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let aligned = parse_and_check(data);
    // The same bytes at an odd address: a parser that casts pointers would misread them.
    let mut shifted = Vec::with_capacity(data.len() + 1);
    shifted.push(0u8);
    shifted.extend_from_slice(data);
    let misaligned = parse_and_check(&shifted[1..]);
    assert_eq!(
        aligned, misaligned,
        "the parse depends on the buffer's alignment"
    );
});

/// Parses `data`; on success returns its symbols after checking the invariants.
fn parse_and_check(data: &[u8]) -> Result<Vec<consistency::SymKey>, String> {
    let parsed = Vdso::parse(data);
    first_call::check(data, &parsed);
    match parsed {
        Ok(v) => match consistency::check_parsed(data, &v) {
            Ok(keys) => Ok(keys),
            Err(violation) => panic!("invariant violated: {violation}"),
        },
        Err(e) => {
            let text = e.to_string();
            assert!(!text.is_empty(), "ElfError {e:?} has an empty Display");
            Err(text)
        }
    }
}
