//! The auxiliary clocks the kernel has enabled (Linux 6.17+ with
//! `CONFIG_POSIX_AUX_CLOCKS`): `/sys/kernel/time/aux_clocks/<n>/aux_clock_enable` reads 1.
//! `info`, `bench`, `check` and `doctor` add them to the clocks they show; a kernel without
//! them has no such directory, and they add nothing.

use std::path::Path;

use vdsotime::ClockId;

/// Where the kernel lists its auxiliary clocks.
pub const SYSFS: &str = "/sys/kernel/time/aux_clocks";

/// The kernel's `MAX_AUX_CLOCKS`.
const MAX_AUX_CLOCKS: u8 = 8;

/// The enabled auxiliary clocks, in id order.
pub fn enabled() -> Vec<ClockId> {
    enabled_in(Path::new(SYSFS))
}

/// The enabled auxiliary clocks, or `None` when the kernel has none (no such directory:
/// older than Linux 6.17, or built without `CONFIG_POSIX_AUX_CLOCKS`).
pub fn listed() -> Option<Vec<ClockId>> {
    listed_in(Path::new(SYSFS))
}

fn listed_in(dir: &Path) -> Option<Vec<ClockId>> {
    dir.is_dir().then(|| enabled_in(dir))
}

fn enabled_in(dir: &Path) -> Vec<ClockId> {
    (0..MAX_AUX_CLOCKS)
        .filter(|n| {
            std::fs::read_to_string(dir.join(n.to_string()).join("aux_clock_enable"))
                .is_ok_and(|s| s.trim() == "1")
        })
        .map(ClockId::aux)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_clocks_that_read_1_are_enabled() {
        let dir = std::env::temp_dir().join(format!("vdsotime-aux-{}", std::process::id()));
        for (n, value) in [(0, "0\n"), (2, "1\n"), (7, "1\n")] {
            let clock = dir.join(n.to_string());
            std::fs::create_dir_all(&clock).unwrap();
            std::fs::write(clock.join("aux_clock_enable"), value).unwrap();
        }
        assert_eq!(enabled_in(&dir), [ClockId::aux(2), ClockId::aux(7)]);
        assert!(enabled_in(&dir.join("missing")).is_empty());
        assert_eq!(
            listed_in(&dir),
            Some(vec![ClockId::aux(2), ClockId::aux(7)])
        );
        assert_eq!(listed_in(&dir.join("missing")), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
