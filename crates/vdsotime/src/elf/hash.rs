//! The two symbol hash tables: `DT_GNU_HASH` (all that new arm64, riscv and loongarch
//! vDSOs carry) and the SysV `DT_HASH` (all that old ones carry). Either may be missing.
//! The GNU table's Bloom filter is skipped: it only speeds up misses, and a vDSO has a
//! dozen symbols.

use super::reader::{offset, plus, Form};
use super::{ElfError, Image};

/// The SysV ELF hash of a name.
#[inline(always)]
fn sysv_hash(name: &[u8]) -> u32 {
    name.iter().fold(0u32, |h, &c| {
        let h = (h << 4).wrapping_add(u32::from(c));
        let g = h & 0xf000_0000;
        (h ^ (g >> 24)) & !g
    })
}

/// The GNU (DJB) hash of a name.
#[inline(always)]
fn gnu_hash(name: &[u8]) -> u32 {
    name.iter().fold(5381u32, |h, &c| {
        h.wrapping_mul(33).wrapping_add(u32::from(c))
    })
}

/// The layout of a `DT_GNU_HASH` table.
struct GnuTable {
    nbuckets: usize,
    symoffset: usize,
    buckets: usize,
    chains: usize,
}

impl GnuTable {
    /// The chain word of symbol `idx`, which must be at least `symoffset`.
    #[inline(always)]
    fn chain<F: Form>(&self, image: &Image<'_, F>, idx: usize) -> Result<u32, ElfError> {
        let rel = idx
            .checked_sub(self.symoffset)
            .ok_or(ElfError::OutOfBounds("DT_GNU_HASH chains"))?;
        image
            .r
            .u32(offset(self.chains, rel, 4)?, "DT_GNU_HASH chains")
    }

    /// The first symbol index of bucket `i`.
    #[inline(always)]
    fn bucket<F: Form>(&self, image: &Image<'_, F>, i: usize) -> Result<usize, ElfError> {
        let at = offset(self.buckets, i, 4)?;
        Ok(image.r.u32(at, "DT_GNU_HASH buckets")? as usize)
    }
}

impl<F: Form> Image<'_, F> {
    #[inline(always)]
    fn gnu_table(&self, at: usize) -> Result<GnuTable, F::Error> {
        let r = &self.r;
        let nbuckets = r.u32(at, "DT_GNU_HASH")? as usize;
        let symoffset = r.u32(plus(at, 4)?, "DT_GNU_HASH")? as usize;
        let bloom_words = r.u32(plus(at, 8)?, "DT_GNU_HASH")? as usize;
        let buckets = offset(plus(at, 16)?, bloom_words, r.pick(4, 8))?;
        let chains = offset(buckets, nbuckets, 4)?;
        Ok(GnuTable {
            nbuckets,
            symoffset,
            buckets,
            chains,
        })
    }

    /// The number of dynamic symbols. `DT_HASH` says it (`nchain`); with only
    /// `DT_GNU_HASH` it is one past the end of the chain that starts at the largest bucket.
    /// A lookup needs neither: see [`Image::candidates`].
    pub(super) fn count_symbols(&self) -> Result<usize, F::Error> {
        if let Some(at) = self.gnu_hash {
            let t = self.gnu_table(at)?;
            let mut last = 0;
            for i in 0..t.nbuckets {
                last = last.max(t.bucket(self, i)?);
            }
            if last < t.symoffset {
                return Ok(t.symoffset);
            }
            // Each step reads a new in-bounds word, so the walk ends within the image.
            loop {
                let link = t.chain(self, last)?;
                last = plus(last, 1)?;
                if link & 1 == 1 {
                    return Ok(last);
                }
            }
        }
        let at = self.sysv_hash.ok_or(ElfError::NoHashTable)?;
        self.sysv_entry(at, 1)
    }

    #[inline(always)]
    fn sysv_entry(&self, at: usize, index: usize) -> Result<usize, F::Error> {
        let off = offset(at, index, self.sysv_word())?;
        let v = match self.sysv_word() {
            8 => self.r.u64(off, "DT_HASH")?,
            _ => u64::from(self.r.u32(off, "DT_HASH")?),
        };
        Ok(usize::try_from(v).map_err(|_| ElfError::OutOfBounds("DT_HASH"))?)
    }

    /// Calls `visit` on each symbol index whose hash matches `name` until it gives a
    /// value or an error; `Ok(None)` when it gave neither. Both walks end within the
    /// symbol count ([`Image::check`]) without counting: a GNU chain ends at its
    /// terminator, which lies at or before the one of the largest bucket's chain (the
    /// count), or at the first word past the image; a SysV walk at `nchain` steps or
    /// indices, so a corrupted chain cannot loop.
    #[inline(always)]
    pub(super) fn candidates<T>(
        &self,
        name: &[u8],
        mut visit: impl FnMut(usize) -> Result<Option<T>, F::Error>,
    ) -> Result<Option<T>, F::Error> {
        if let Some(at) = self.gnu_hash {
            let t = self.gnu_table(at)?;
            let h = gnu_hash(name);
            let Some(bucket) = (h as usize).checked_rem(t.nbuckets) else {
                return Ok(None); // no buckets: no symbols
            };
            let mut idx = t.bucket(self, bucket)?;
            if idx < t.symoffset {
                return Ok(None);
            }
            loop {
                let link = t.chain(self, idx)?;
                if (link | 1) == (h | 1) {
                    if let Some(found) = visit(idx)? {
                        return Ok(Some(found));
                    }
                }
                if link & 1 == 1 {
                    return Ok(None);
                }
                idx = plus(idx, 1)?;
            }
        }
        let at = self.sysv_hash.ok_or(ElfError::NoHashTable)?;
        let (nbucket, nchain) = (self.sysv_entry(at, 0)?, self.sysv_entry(at, 1)?);
        let Some(bucket) = (sysv_hash(name) as usize).checked_rem(nbucket) else {
            return Ok(None); // no buckets: no symbols
        };
        // Words: nbucket, nchain, the buckets, then the chains.
        let chain = plus(2, nbucket)?;
        let mut idx = self.sysv_entry(at, plus(2, bucket)?)?;
        for _ in 0..nchain {
            if idx == 0 || idx >= nchain {
                break;
            }
            if let Some(found) = visit(idx)? {
                return Ok(Some(found));
            }
            idx = self.sysv_entry(at, plus(chain, idx)?)?;
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_hash_values() {
        // Values from the ELF and GNU specifications' reference implementations.
        assert_eq!(sysv_hash(b""), 0);
        assert_eq!(gnu_hash(b""), 5381);
        assert_eq!(gnu_hash(b"printf"), 0x156b_2bb8);
        assert_eq!(sysv_hash(b"printf"), 0x0779_05a6);
        assert_eq!(sysv_hash(b"LINUX_2.6"), 0x03ae_75f6);
    }
}
