//! The kernel's counters are cumulative: what each refresh adds is the difference from
//! the last read, per key. A key whose process has exited is read a last time and then
//! deleted (by the caller), so its id may count a new process from zero.

use std::collections::HashMap;

use crate::top::syscalls::Abi;

/// A key of the kernel's `counts` map (`struct key` in bpf/count.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    /// The process, in the viewer's PID namespace.
    pub tgid: u32,
    /// The system call number, in the task's own ABI.
    pub nr: u32,
    /// The clock id, or -1 for a call that takes none.
    pub clock: i32,
    /// The table `nr` is in: [`ABI_NATIVE`], [`ABI_COMPAT`], or 0 from the tracepoint
    /// off x86_64, which cannot tell (the number is then read with the ABI of the
    /// executable).
    pub abi: u32,
}

/// `abi` of a key counted at the kernel's native entry of the call (fentry), or from a
/// 64-bit code segment (the tracepoint on x86_64).
pub const ABI_NATIVE: u32 = 1;
/// `abi` of a key counted at x86_64's i386 entry of the call (fentry), or from a 32-bit
/// code segment (the tracepoint).
pub const ABI_COMPAT: u32 = 2;

impl Key {
    /// The ABI its number is in, where the counter knew it.
    pub fn abi(&self) -> Option<Abi> {
        match self.abi {
            ABI_NATIVE => Some(Abi::Native),
            ABI_COMPAT => Some(Abi::I386),
            _ => None,
        }
    }
}

// SAFETY: four 32-bit integers, no padding bytes (16 bytes, 4-aligned): every bit
// pattern is a valid Key, as aya's Pod requires.
unsafe impl aya::Pod for Key {}

/// The last value read of every key.
#[derive(Default)]
pub struct Deltas {
    last: HashMap<Key, u64>,
}

impl Deltas {
    /// What `key` added since the last read, given its `total` now.
    pub fn step(&mut self, key: Key, total: u64) -> u64 {
        let last = self.last.insert(key, total).unwrap_or(0);
        // A total below the last one is a key deleted and counted again from zero.
        total.checked_sub(last).unwrap_or(total)
    }

    /// Forgets `key` (deleted in the kernel).
    pub fn forget(&mut self, key: &Key) {
        self.last.remove(key);
    }
}

/// The sum of a per-CPU value over the CPUs.
pub fn sum(values: &[u64]) -> u64 {
    values.iter().fold(0u64, |a, &v| a.wrapping_add(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(tgid: u32) -> Key {
        Key {
            tgid,
            nr: 228,
            clock: 1,
            abi: 0,
        }
    }

    #[test]
    fn each_read_yields_what_was_added_since_the_last() {
        let mut d = Deltas::default();
        assert_eq!(d.step(key(1), 5), 5);
        assert_eq!(d.step(key(1), 5), 0);
        assert_eq!(d.step(key(1), 12), 7);
        assert_eq!(d.step(key(2), 3), 3);
        d.forget(&key(1));
        assert_eq!(d.step(key(1), 2), 2, "a deleted key counts from zero");
    }

    #[test]
    fn per_cpu_values_are_summed() {
        assert_eq!(sum(&[1, 2, 3]), 6);
        assert_eq!(sum(&[]), 0);
    }
}
