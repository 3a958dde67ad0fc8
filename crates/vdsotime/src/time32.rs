//! time32 values (`struct old_timespec32` and `old_timeval32`, 32-bit seconds), widened
//! to this crate's 64-bit types. They exist only where a kernel has no time64 interface:
//! the time32 vDSO symbols of 32-bit kernels without `*_time64` ones (before Linux 5.1 to
//! 5.6, by architecture), and the time32 syscalls of kernels before 5.1.
//!
//! What is detected, exactly. The kernel truncates its 64-bit seconds to their low 32
//! bits. A value whose sign bit is then set (low 32 bits in 2^31..2^32) is refused with
//! `EOVERFLOW`: for the wall clocks (REALTIME, TAI, `gettimeofday`) every reading from
//! 2038-01-19 03:14:08 UTC to 2106-02-07 06:28:15 UTC; for the clocks counted from boot,
//! an uptime of 68 to 136 years. From 2106-02-07 06:28:16 UTC (2^32 s) on, the low 32 bits
//! are small and positive again: such a reading looks like one from 1970 to 2038, and
//! nothing in a time32 value tells the two apart, so it is *not* detected.

/// `-EOVERFLOW`, as the time32 syscalls' callers return it.
pub(crate) const OVERFLOW: i32 = -(linux_raw_sys::errno::EOVERFLOW as i32);

/// Widens a time32 (seconds, sub-seconds) pair, or `Err(OVERFLOW)` when the seconds have
/// their sign bit set (see the module's documentation for what that does and does not
/// catch).
#[cfg_attr(target_pointer_width = "64", allow(dead_code))] // used by 32-bit targets
pub(crate) const fn widen(pair: [i32; 2]) -> Result<(i64, i64), i32> {
    if pair[0] < 0 {
        return Err(OVERFLOW);
    }
    Ok((pair[0] as i64, pair[1] as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a time32 interface hands back for the kernel's 64-bit seconds.
    fn truncated(secs: i64) -> [i32; 2] {
        [secs as i32, 999_999_999]
    }

    const Y2038: i64 = 1 << 31; // 2038-01-19 03:14:08 UTC
    const Y2106: i64 = 1 << 32; // 2106-02-07 06:28:16 UTC

    #[test]
    fn values_before_2038_widen_unchanged() {
        for secs in [0, 1, 1_700_000_000, Y2038 - 1] {
            assert_eq!(widen(truncated(secs)), Ok((secs, 999_999_999)), "{secs}");
        }
    }

    #[test]
    fn every_value_from_2038_to_2106_is_refused() {
        for secs in [Y2038, Y2038 + 1, 3_000_000_000, Y2106 - 1] {
            assert_eq!(widen(truncated(secs)), Err(OVERFLOW), "{secs}");
        }
        // The same window 2^32 s later, and from boot: 68 to 136 years of uptime.
        assert_eq!(widen(truncated(Y2106 + Y2038)), Err(OVERFLOW));
    }

    /// The documented limit: from 2106 the truncated seconds are positive again, and the
    /// reading is taken for one 2^32 s (136 years) earlier.
    #[test]
    fn values_from_2106_are_not_detected() {
        for secs in [Y2106, Y2106 + 1_700_000_000, Y2106 + Y2038 - 1] {
            assert_eq!(widen(truncated(secs)), Ok((secs - Y2106, 999_999_999)));
        }
    }
}
