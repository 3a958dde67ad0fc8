//! Reading the fuzz input: the image's shape (class, byte order, counts) from its first
//! bytes, then edits that bend one field each: a little off its honest value, near 0,
//! near the field's largest value or its sign bit, or anything at all. Every draw's zero
//! input is the default, so a short input gives a well-formed image and each added edit
//! moves one field away from it.

use arbitrary::{Result, Unstructured};

/// The fuzz input, read draw by draw (zeros once it runs out).
pub struct Draw<'a>(pub Unstructured<'a>);

impl Draw<'_> {
    /// A value for a field `bits` wide that is not quite `right`. One byte decides (only
    /// "anything" reads eight more).
    pub fn bend(&mut self, bits: u32, right: u64) -> Result<u64> {
        let max = u64::MAX >> (64 - bits);
        let b = self.0.arbitrary::<u8>()?;
        let k = u64::from(b & 15);
        let v = match b >> 4 {
            0..=2 => right.wrapping_add(k + 1),
            3..=5 => right.wrapping_sub(k + 1),
            6 | 7 => k,
            8..=11 => max.wrapping_sub(k),
            12 | 13 => (max >> 1).wrapping_add(k).wrapping_sub(8), // around the sign bit
            _ => self.0.arbitrary::<u64>()?,
        };
        Ok(v & max)
    }

    /// A count: `default`, or any other in `0..=max`.
    pub fn count(&mut self, default: usize, max: usize) -> Result<usize> {
        Ok(match self.0.int_in_range(0..=max + 1)? {
            0 => default,
            n => n - 1,
        })
    }

    /// One of `choices`, the first by default.
    pub fn pick<T: Copy>(&mut self, choices: &[T]) -> Result<T> {
        Ok(choices[self.0.int_in_range(0..=choices.len() - 1)?])
    }

    /// `false` by default.
    pub fn flag(&mut self) -> Result<bool> {
        self.0.arbitrary()
    }

    /// Whether input is left for another edit.
    pub fn more(&self) -> bool {
        !self.0.is_empty()
    }
}
