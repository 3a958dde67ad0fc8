//! The two symbol hash tables: `DT_GNU_HASH` (all that new arm64, riscv and loongarch
//! vDSOs carry) and the SysV `DT_HASH` (all that old ones carry). Either may be missing.
//! The GNU table's Bloom filter is skipped: it only speeds up misses, and a vDSO has a
//! dozen symbols.

use super::reader::{offset, plus, Form};
use super::{ElfError, Image};

/// The step of the SysV ELF hash for byte `c`.
#[inline(always)]
fn sysv_step(h: u32, c: u8) -> u32 {
    let h = (h << 4).wrapping_add(u32::from(c));
    let g = h & 0xf000_0000;
    (h ^ (g >> 24)) & !g
}

/// The step of the GNU (DJB) hash for byte `c`.
#[inline(always)]
fn gnu_step(h: u32, c: u8) -> u32 {
    h.wrapping_mul(33).wrapping_add(u32::from(c))
}

/// The GNU and the SysV hash of a name, in one pass: one loop in the lookup's code,
/// not one per table.
#[inline(always)]
fn hashes(name: &[u8]) -> (u32, u32) {
    name.iter().fold((5381, 0), |(gnu, sysv), &c| {
        (gnu_step(gnu, c), sysv_step(sysv, c))
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
        // nbuckets, symoffset and the Bloom filter's size: one bound for the three words.
        let head = r.sub(at, 12, "DT_GNU_HASH")?;
        let nbuckets = head.u32(0, "DT_GNU_HASH")? as usize;
        let symoffset = head.u32(4, "DT_GNU_HASH")? as usize;
        let bloom_words = head.u32(8, "DT_GNU_HASH")? as usize;
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
    /// count), or at the first word past the image; a SysV walk at `nchain` steps (and
    /// no more than the image holds entries) or indices, so a corrupted chain cannot loop.
    ///
    /// The two walks share one loop with one call of `visit`, so that the caller's
    /// closure is inlined once, not once per kind of table.
    #[inline(always)]
    pub(super) fn candidates<T>(
        &self,
        name: &[u8],
        mut visit: impl FnMut(usize) -> Result<Option<T>, F::Error>,
    ) -> Result<Option<T>, F::Error> {
        let Some((mut walk, mut idx)) = self.walk(name)? else {
            return Ok(None);
        };
        loop {
            // Whether symbol `idx` may be `name`, and whether it ends its GNU chain.
            let (candidate, last) = match &mut walk {
                Walk::Gnu { table, hash } => {
                    let link = table.chain(self, idx)?;
                    ((link | 1) == (*hash | 1), link & 1 == 1)
                }
                Walk::Sysv { nchain, left, .. } => {
                    let Some(rest) = left.checked_sub(1) else {
                        return Ok(None);
                    };
                    if idx == 0 || idx >= *nchain {
                        return Ok(None);
                    }
                    *left = rest;
                    (true, false)
                }
            };
            if candidate {
                if let Some(found) = visit(idx)? {
                    return Ok(Some(found));
                }
            }
            if last {
                return Ok(None);
            }
            idx = match walk {
                Walk::Gnu { .. } => plus(idx, 1)?,
                Walk::Sysv { at, chains, .. } => self.sysv_entry(at, plus(chains, idx)?)?,
            };
        }
    }

    /// The walk of the table a lookup of `name` reads (the GNU one where there is one, as
    /// the dynamic loader does) and the first symbol index of its bucket; `None` when the
    /// bucket is empty or there are no buckets.
    #[inline(always)]
    fn walk(&self, name: &[u8]) -> Result<Option<(Walk, usize)>, F::Error> {
        let (hash, sysv) = hashes(name);
        if let Some(at) = self.gnu_hash {
            let table = self.gnu_table(at)?;
            let Some(bucket) = (hash as usize).checked_rem(table.nbuckets) else {
                return Ok(None); // no buckets: no symbols
            };
            let idx = table.bucket(self, bucket)?;
            if idx < table.symoffset {
                return Ok(None);
            }
            return Ok(Some((Walk::Gnu { table, hash }, idx)));
        }
        let at = self.sysv_hash.ok_or(ElfError::NoHashTable)?;
        let (nbucket, nchain) = (self.sysv_entry(at, 0)?, self.sysv_entry(at, 1)?);
        let Some(bucket) = (sysv as usize).checked_rem(nbucket) else {
            return Ok(None); // no buckets: no symbols
        };
        // Words: nbucket, nchain, the buckets, then the chains.
        let chains = plus(2, nbucket)?;
        let idx = self.sysv_entry(at, plus(2, bucket)?)?;
        // A sound walk visits distinct symbols, each an entry inside the image, so it
        // takes no more steps than the image holds entries. `nchain` alone is no bound
        // here: the first call's reader does not check it against the symbol table (as
        // `Image::check` does), and a chain that loops would be walked `nchain` times.
        let entries = self.r.bytes.len().checked_div(self.syment).unwrap_or(0);
        let left = nchain.min(entries);
        Ok(Some((
            Walk::Sysv {
                at,
                chains,
                nchain,
                left,
            },
            idx,
        )))
    }
}

/// Where a lookup's hash walk is (see [`Image::candidates`]).
enum Walk {
    /// A `DT_GNU_HASH` chain, for a name of this hash.
    Gnu { table: GnuTable, hash: u32 },
    /// A `DT_HASH` chain: the table at `at`, its chain words from word `chains`, and the
    /// steps `left` of the `nchain` a walk may take.
    Sysv {
        at: usize,
        chains: usize,
        nchain: usize,
        left: usize,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sysv_hash(name: &[u8]) -> u32 {
        hashes(name).1
    }

    fn gnu_hash(name: &[u8]) -> u32 {
        hashes(name).0
    }

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
