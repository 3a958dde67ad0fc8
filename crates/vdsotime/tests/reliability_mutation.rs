//! Mutation testing of the parser on real images (this process's vDSO and every fixture):
//! every single-byte change in the metadata region, then random multi-byte mutations with
//! proptest. Each result must be an `Err` or an image that passes the consistency checks,
//! and must not depend on the buffer's address alignment. The stable-toolchain counterpart
//! of the fuzz target; Miri runs the same file where a nightly with Miri is installed.

mod reliability_common;

use proptest::prelude::*;
use reliability_common::consistency::{check_parsed, SymKey};
use reliability_common::real_images;
use vdsotime::Vdso;

/// Parses `img` and checks it; panics with `label` on a violated invariant.
fn parse_checked(label: &str, img: &[u8]) -> Result<Vec<SymKey>, String> {
    match Vdso::parse(img) {
        Ok(v) => match check_parsed(img, &v) {
            Ok(keys) => Ok(keys),
            Err(e) => panic!("{label}: {e}"),
        },
        Err(e) => Err(e.to_string()),
    }
}

/// Parses a copy of `img` placed at every alignment 1..8 and compares with the aligned parse.
fn alignment_independent(label: &str, img: &[u8]) {
    let base = parse_checked(label, img);
    let mut buf = vec![0u8; img.len() + 8];
    for shift in 1..8 {
        buf[shift..shift + img.len()].copy_from_slice(img);
        let shifted = parse_checked(label, &buf[shift..shift + img.len()]);
        assert_eq!(
            base, shifted,
            "{label}: result differs at alignment offset {shift}"
        );
    }
}

/// Where the code starts: every vDSO puts its ELF metadata (headers, hash tables, symbols,
/// strings, versions, dynamic table) before its first function.
fn first_code(img: &[u8]) -> usize {
    Vdso::parse(img)
        .ok()
        .and_then(|v| v.symbols().map(|s| s.offset).min())
        .unwrap_or(img.len())
        .min(img.len())
}

#[test]
fn real_images_do_not_depend_on_alignment() {
    for (label, img) in real_images() {
        alignment_independent(&label, &img);
    }
}

/// Every byte of the metadata region, and every 61st byte of the rest (code and section
/// headers), each set to 0x00, 0xff, and with its lowest and highest bit flipped.
#[test]
fn every_single_byte_mutation() {
    // The same image through the library and through /proc: mutate it once.
    let mut images = real_images();
    if images.len() > 1 && images[1].0.contains("/proc/self/mem") {
        images.remove(0);
    }
    // Miri runs some 10,000 times slower: one image, sampled.
    if cfg!(miri) {
        images.truncate(1);
    }
    let (mut total, mut accepted) = (0usize, 0usize);
    for (label, img) in &images {
        let meta = first_code(img);
        let (dense, sparse) = if cfg!(miri) { (29, 997) } else { (1, 61) };
        let positions = (0..meta)
            .step_by(dense)
            .chain((meta..img.len()).step_by(sparse));
        let mut b = img.clone();
        for pos in positions {
            let orig = b[pos];
            for new in [0x00, 0xff, orig ^ 0x01, orig ^ 0x80] {
                if new == orig {
                    continue;
                }
                b[pos] = new;
                total += 1;
                let result = Vdso::parse(&b).map(|v| check_parsed(&b, &v));
                match result {
                    Ok(Err(e)) => panic!("{label}: byte {pos:#x} {orig:#04x}->{new:#04x}: {e}"),
                    Ok(Ok(_)) => accepted += 1,
                    Err(_) => {}
                }
            }
            b[pos] = orig;
        }
    }
    println!(
        "{total} single-byte mutants of {} images, {accepted} accepted",
        images.len()
    );
}

/// One edit to an image: overwrite bytes, copy a range elsewhere, or change the length.
#[derive(Debug, Clone)]
enum Edit {
    Set(usize, u8),
    SetWord(usize, u64),
    Copy { from: usize, to: usize, len: usize },
    Truncate(usize),
    Extend(usize, u8),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        6 => (any::<usize>(), any::<u8>()).prop_map(|(p, v)| Edit::Set(p, v)),
        3 => (any::<usize>(), prop_oneof![Just(0u64), Just(u64::MAX), Just(1 << 31), Just(0x1000), any::<u64>()])
            .prop_map(|(p, v)| Edit::SetWord(p, v)),
        2 => (any::<usize>(), any::<usize>(), 1usize..64).prop_map(|(from, to, len)| Edit::Copy { from, to, len }),
        1 => any::<usize>().prop_map(Edit::Truncate),
        1 => (1usize..256, any::<u8>()).prop_map(|(n, v)| Edit::Extend(n, v)),
    ]
}

/// Applies an edit; positions are taken modulo the current length.
fn apply(b: &mut Vec<u8>, e: &Edit) {
    let len = b.len();
    if len == 0 {
        return;
    }
    match *e {
        Edit::Set(p, v) => b[p % len] = v,
        Edit::SetWord(p, v) => {
            let p = p % len;
            let n = (len - p).min(8);
            b[p..p + n].copy_from_slice(&v.to_le_bytes()[..n]);
        }
        Edit::Copy { from, to, len: n } => {
            let (from, to) = (from % len, to % len);
            let n = n.min(len - from).min(len - to);
            b.copy_within(from..from + n, to);
        }
        Edit::Truncate(n) => b.truncate(n % len),
        Edit::Extend(n, v) => b.extend(std::iter::repeat_n(v, n)),
    }
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: if cfg!(miri) { 8 } else { 512 },
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_mutations(image_pick in any::<usize>(), edits in prop::collection::vec(edit(), 1..24)) {
        let images = real_images();
        prop_assume!(!images.is_empty());
        let (label, img) = &images[image_pick % images.len()];
        let mut b = img.clone();
        for e in &edits {
            apply(&mut b, e);
        }
        alignment_independent(&format!("{label} with {edits:?}"), &b);
    }
}
