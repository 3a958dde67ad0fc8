//! Output sanity of `vdsotime::getrandom` (not a test of ChaCha20, which is the
//! kernel's): no 32-byte block repeats in 10^6 draws, and the byte frequencies of
//! those 32 MB pass a chi-squared test with 255 degrees of freedom.
//!
//! The threshold: the statistic must lie in [161.5, 377.2], the 10^-6 and 1 - 10^-6
//! quantiles of chi-squared(255) (Wilson–Hilferty), so a correct generator fails once
//! in 500,000 runs; a stuck byte, a counter, a state shared between calls or zeros
//! left in the buffer push it far outside. Both the per-thread state and a `State`.

use vdsotime::random::State;
use vdsotime::GrndFlags;

const DRAWS: usize = 1_000_000;
const LOW: f64 = 161.5;
const HIGH: f64 = 377.2;

fn check(what: &str, mut draw: impl FnMut(&mut [u8; 32])) {
    let mut blocks = vec![[0u8; 32]; DRAWS];
    let mut counts = [0u64; 256];
    for b in blocks.iter_mut() {
        draw(b);
        for &byte in b.iter() {
            counts[byte as usize] += 1;
        }
    }
    let n = (DRAWS * 32) as f64;
    let expected = n / 256.0;
    let chi2: f64 = counts
        .iter()
        .map(|&c| (c as f64 - expected).powi(2) / expected)
        .sum();
    blocks.sort_unstable();
    let repeats = blocks.windows(2).filter(|w| w[0] == w[1]).count();
    println!("{what}: {DRAWS} draws of 32 bytes, {repeats} repeated; chi-squared(255) = {chi2:.1}");
    assert_eq!(repeats, 0, "{what}: a 32-byte block repeated");
    assert!(
        (LOW..=HIGH).contains(&chi2),
        "{what}: chi-squared {chi2:.1} outside [{LOW}, {HIGH}]"
    );
}

#[test]
fn no_repeated_block_and_uniform_bytes() {
    check("getrandom", |b| {
        assert_eq!(vdsotime::getrandom(b, GrndFlags::NONE), Ok(32));
    });
    let mut state = State::new();
    check("State::getrandom", |b| {
        assert_eq!(state.getrandom(b, GrndFlags::NONE), Ok(32));
    });
}
