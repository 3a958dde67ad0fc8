//! The cache outside the clone, for what is expensive to make and never changes once made
//! (a kernel built from source, the fleet machine's root): `$XDG_CACHE_HOME/vdsotime/<name>`,
//! else `$HOME/.cache/vdsotime/<name>`, each entry named by a hash of what made it.

use std::path::PathBuf;

/// The cache directory `name` (not created).
pub fn dir(name: &str) -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| std::env::temp_dir().join("cache"));
    base.join("vdsotime").join(name)
}

/// A text's hash (FNV-1a, 64 bits), naming what it made: a changed input makes anew.
pub fn hash(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_fnv1a() {
        assert_eq!(hash("a"), "af63dc4c8601ec8c");
    }
}
