//! `GrndFlags`: the `flags` argument of `getrandom(2)`, any bits included, so that a
//! caller can pass exactly what it would pass to the system call and get its answer.

use core::fmt;
use core::ops::{BitOr, BitOrAssign};

use linux_raw_sys::general::{GRND_INSECURE, GRND_NONBLOCK, GRND_RANDOM};

/// The flags of `getrandom(2)`.
///
/// Unknown bits are kept (not dropped), so [`crate::getrandom`] can give the kernel's
/// `EINVAL` for them, as the system call does.
///
/// ```
/// use vdsotime::GrndFlags;
/// let f = GrndFlags::NONBLOCK | GrndFlags::INSECURE;
/// assert_eq!(f.raw(), 5);
/// assert!(f.contains(GrndFlags::NONBLOCK));
/// assert_eq!(GrndFlags::from_raw(8).raw(), 8); // kept, and refused by the call
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct GrndFlags(u32);

impl GrndFlags {
    /// No flag: block until the kernel's generator is ready, then never block.
    pub const NONE: GrndFlags = GrndFlags(0);
    /// `GRND_NONBLOCK`: `EAGAIN` instead of blocking before the generator is ready.
    pub const NONBLOCK: GrndFlags = GrndFlags(GRND_NONBLOCK);
    /// `GRND_RANDOM`: a no-op since Linux 5.6 once the generator is ready.
    pub const RANDOM: GrndFlags = GrndFlags(GRND_RANDOM);
    /// `GRND_INSECURE`: never block, even before the generator is ready (Linux 5.6+).
    pub const INSECURE: GrndFlags = GrndFlags(GRND_INSECURE);

    /// Every flag the kernel knows.
    const KNOWN: u32 = GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE;

    /// Exactly these bits, known or not.
    ///
    /// # Example
    ///
    /// ```
    /// use vdsotime::{Errno, GrndFlags};
    /// assert_eq!(GrndFlags::from_raw(1), GrndFlags::NONBLOCK);
    /// // Unknown bits reach the kernel, which refuses them.
    /// assert_eq!(vdsotime::getrandom(&mut [0; 4], GrndFlags::from_raw(0x80)), Err(Errno::EINVAL));
    /// ```
    pub const fn from_raw(bits: u32) -> GrndFlags {
        GrndFlags(bits)
    }

    /// The bits, as the system call takes them.
    ///
    /// # Example
    ///
    /// ```
    /// use vdsotime::GrndFlags;
    /// assert_eq!((GrndFlags::NONBLOCK | GrndFlags::INSECURE).raw(), 0x5);
    /// ```
    pub const fn raw(self) -> u32 {
        self.0
    }

    /// Whether every bit of `other` is set here.
    ///
    /// # Example
    ///
    /// ```
    /// use vdsotime::GrndFlags;
    /// let f = GrndFlags::NONBLOCK | GrndFlags::INSECURE;
    /// assert!(f.contains(GrndFlags::NONBLOCK) && !f.contains(GrndFlags::RANDOM));
    /// ```
    pub const fn contains(self, other: GrndFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether the vDSO answers these flags as the system call would. The kernel
    /// refuses unknown bits and `GRND_INSECURE | GRND_RANDOM` with `EINVAL`; the vDSO
    /// refuses the first by making the system call, but serves the second from user
    /// space (`lib/vdso/getrandom.c` checks only for unknown bits), so both go to the
    /// system call, which gives the kernel's answer.
    #[inline(always)]
    pub(crate) const fn vdso_servable(self) -> bool {
        self.0 & !Self::KNOWN == 0
            && self.0 & (GRND_INSECURE | GRND_RANDOM) != GRND_INSECURE | GRND_RANDOM
    }
}

impl BitOr for GrndFlags {
    type Output = GrndFlags;
    fn bitor(self, rhs: GrndFlags) -> GrndFlags {
        GrndFlags(self.0 | rhs.0)
    }
}

impl BitOrAssign for GrndFlags {
    fn bitor_assign(&mut self, rhs: GrndFlags) {
        self.0 |= rhs.0;
    }
}

impl fmt::Debug for GrndFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut rest = self.0;
        for (bit, name) in [
            (GRND_NONBLOCK, "GRND_NONBLOCK"),
            (GRND_RANDOM, "GRND_RANDOM"),
            (GRND_INSECURE, "GRND_INSECURE"),
        ] {
            if rest & bit != 0 {
                f.write_str(if first { "" } else { " | " })?;
                f.write_str(name)?;
                rest &= !bit;
                first = false;
            }
        }
        match (first, rest) {
            (true, 0) => f.write_str("0"),
            (true, r) => write!(f, "{r:#x}"),
            (false, 0) => Ok(()),
            (false, r) => write!(f, " | {r:#x}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;

    #[test]
    fn servable_flags_are_the_ones_the_vdso_answers_like_the_kernel() {
        for bits in 0..16 {
            let f = GrndFlags::from_raw(bits);
            let both = bits & 6 == 6;
            assert_eq!(f.vdso_servable(), bits < 8 && !both, "{f:?}");
        }
        assert!(!GrndFlags::from_raw(1 << 31).vdso_servable());
    }

    #[test]
    fn debug_names_the_flags() {
        assert_eq!(format!("{:?}", GrndFlags::NONE), "0");
        assert_eq!(
            format!("{:?}", GrndFlags::NONBLOCK | GrndFlags::INSECURE),
            "GRND_NONBLOCK | GRND_INSECURE"
        );
        assert_eq!(
            format!("{:?}", GrndFlags::from_raw(9)),
            "GRND_NONBLOCK | 0x8"
        );
    }
}
