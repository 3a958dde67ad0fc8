//! Assembles an ELF shared object with the layout of a vDSO (header, program headers,
//! dynamic table, symbols, strings, both hash tables, versions, code), then bends it.
//!
//! The input's first bytes choose the shape: class, byte order, machine, load address,
//! how many symbols (with which names), buckets, versions and program headers. The image
//! is then written honestly, every count, offset, size and address recorded as a field;
//! the rest of the input is a list of edits, each bending one field (or the length) by
//! [`Draw::bend`]. An input of the shape alone is a valid image, and each edit is two
//! bytes that move one field toward 0 or its type's limits, so libFuzzer's mutations
//! explore images that are wrong in one, two or three places, where parsers break.

use crate::consistency::table_names;
use crate::elf_builder::{gnu_hash, sysv_hash, Out};
use crate::structured::draw::Draw;
use arbitrary::Result;

const VERSIONS: [&str; 4] = ["LINUX_2.6", "LINUX_2.6.39", "LINUX_4.15", "LINUX_5.10"];
/// x86-64, i386, aarch64, arm, riscv, s390, ppc64, loongarch, mips.
const MACHINES: [u16; 9] = [62, 3, 183, 40, 243, 22, 21, 258, 8];
/// Load addresses (truncated to 32 bits for ELF32): 0, high ones, and one near the top.
const BASES: [u64; 5] = [
    0,
    0xffff_e000,
    0xffff_ffff_ff70_0000,
    u64::MAX - 0xfff,
    0x1000,
];

/// A field edits may bend: its offset (and a twin's, written with the same value), width
/// in bytes and honest value.
#[derive(Clone, Copy)]
struct Field {
    at: usize,
    twin: Option<usize>,
    size: usize,
    value: u64,
}

/// The image being written and its fields.
struct Image {
    out: Out,
    fields: Vec<Field>,
}

impl Image {
    fn field(&mut self, at: usize, size: usize, value: u64) {
        self.twin(at, None, size, value);
    }

    /// A field of the class's word size.
    fn word(&mut self, at: usize, value: u64) {
        let size = if self.out.elf64 { 8 } else { 4 };
        self.twin(at, None, size, value);
    }

    /// A field written at `at` and, with the same value, at `twin` (p_filesz and p_memsz,
    /// equal in every vDSO): one edit can bend both, or each alone.
    fn twin(&mut self, at: usize, twin: Option<usize>, size: usize, value: u64) {
        let mut put = |at| {
            self.out.put(at, value, size);
            self.fields.push(Field {
                at,
                twin: None,
                size,
                value,
            });
        };
        put(at);
        if let Some(t) = twin {
            put(t);
            self.fields.push(Field {
                at,
                twin,
                size,
                value,
            });
        }
    }

    fn set(&mut self, f: Field, value: u64) {
        self.out.put(f.at, value, f.size);
        if let Some(t) = f.twin {
            self.out.put(t, value, f.size);
        }
    }
}

/// Builds one image from the input.
pub fn build(d: &mut Draw<'_>) -> Result<Vec<u8>> {
    // The shape.
    let elf64 = !d.flag()?;
    let be = d.flag()?;
    let machine = match d.flag()? {
        false => MACHINES[d.count(0, MACHINES.len() - 1)?],
        true => d.0.arbitrary()?,
    };
    let bits = if elf64 { 64 } else { 32 };
    let base = d.pick(&BASES)? & (u64::MAX >> (64 - bits));
    let all = table_names();
    let nsyms = d.count(6, 12)?;
    let mut names = Vec::new();
    for i in 0..nsyms {
        names.push(all[d.count(i % all.len(), all.len() - 1)?].0);
    }
    let nb = d.count(3, 6)?.max(1);
    names.sort_by_key(|n| gnu_hash(n.as_bytes()) as usize % nb); // GNU hash groups by bucket
    let nver = d.count(1, VERSIONS.len())?;
    let nph = d.count(2, 5)?;

    // The string table: "", the names, the versions, the file's soname.
    let mut strtab = vec![0u8];
    let mut intern = |s: &str| {
        let at = strtab.len();
        strtab.extend_from_slice(s.as_bytes());
        strtab.push(0);
        at as u64
    };
    let name_at: Vec<u64> = names.iter().map(|n| intern(n)).collect();
    let ver_at: Vec<u64> = VERSIONS[..nver].iter().map(|v| intern(v)).collect();
    let soname_at = intern("linux-vdso.so.1");

    // Layout: program headers, dynamic table, symbols, strings, hashes, versions, code.
    let word = if elf64 { 8 } else { 4 };
    let (ehsize, phentsize, dynsize, syment) = if elf64 {
        (64, 56, 16, 24)
    } else {
        (52, 32, 8, 16)
    };
    let phoff = ehsize;
    let dynamic = phoff + nph * phentsize;
    let ndyn = 10;
    let dynsym = dynamic + ndyn * dynsize;
    let nentries = nsyms + 1; // with the null symbol
    let dynstr = dynsym + nentries * syment;
    let sysv_word = if elf64 && machine == 22 { 8 } else { 4 };
    let sysv = (dynstr + strtab.len()).next_multiple_of(8);
    let gnu = sysv + (2 + nb + nentries) * sysv_word;
    let gnu_buckets = gnu + 16 + word;
    let gnu_chains = gnu_buckets + 4 * nb;
    let versym = gnu_chains + 4 * nsyms;
    let verdef = (versym + 2 * nentries).next_multiple_of(4);
    let code = verdef + 28 * (nver + 1);
    let total = code + 16 * nsyms;
    let addr = |off: usize| base.wrapping_add(off as u64);
    let mut img = Image {
        out: Out {
            bytes: vec![0; total],
            be,
            elf64,
        },
        fields: Vec::new(),
    };

    // ELF header.
    img.out.bytes[..4].copy_from_slice(b"\x7fELF");
    img.out.bytes[4] = if elf64 { 2 } else { 1 };
    img.out.bytes[5] = if be { 2 } else { 1 };
    img.field(6, 1, 1); // EI_VERSION
    img.field(16, 2, 3); // ET_DYN
    img.out.put(18, u64::from(machine), 2);
    img.field(20, 4, 1); // e_version
    let f = |e32: usize, e64: usize| if elf64 { e64 } else { e32 };
    img.word(f(28, 32), phoff as u64);
    img.word(f(32, 40), 0); // e_shoff
    img.field(f(40, 52), 2, ehsize as u64);
    img.field(f(42, 54), 2, phentsize as u64);
    img.field(f(44, 56), 2, nph as u64);
    img.field(f(46, 58), 2, 0); // e_shentsize
    img.field(f(48, 60), 2, 0); // e_shnum

    // Program headers: PT_LOAD over everything, PT_DYNAMIC, then PT_NOTEs.
    for i in 0..nph {
        let p = phoff + i * phentsize;
        let (kind, off, size) = match i {
            0 => (1, 0, total),
            1 => (2, dynamic, ndyn * dynsize),
            _ => (4, 0, 0),
        };
        let (off_at, vaddr_at, paddr_at, filesz_at, memsz_at) = if elf64 {
            (8, 16, 24, 32, 40)
        } else {
            (4, 8, 12, 16, 20)
        };
        img.field(p, 4, kind);
        img.word(p + off_at, off as u64);
        let s = word;
        img.twin(p + vaddr_at, Some(p + paddr_at), s, addr(off));
        img.twin(p + filesz_at, Some(p + memsz_at), s, size as u64);
    }

    // The dynamic table, ending in DT_NULL.
    let entries = [
        (5u64, addr(dynstr)),
        (6, addr(dynsym)),
        (10, strtab.len() as u64),
        (11, syment as u64),
        (4, addr(sysv)),
        (0x6fff_fef5, addr(gnu)),
        (0x6fff_fff0, addr(versym)),
        (0x6fff_fffc, addr(verdef)),
        (0x6fff_fffd, nver as u64 + 1),
        (0, 0),
    ];
    for (i, (tag, val)) in entries.into_iter().enumerate() {
        img.word(dynamic + i * dynsize, tag);
        img.word(dynamic + i * dynsize + word, val);
    }

    // Symbols (entry 0 is the null symbol) and their code.
    for (i, &name) in name_at.iter().enumerate() {
        let s = dynsym + (i + 1) * syment;
        let (info_at, shndx_at, value_at) = if elf64 { (4, 6, 8) } else { (12, 14, 4) };
        img.field(s, 4, name);
        img.field(s + info_at, 1, 0x12); // STB_GLOBAL, STT_FUNC
        img.field(s + shndx_at, 2, 7);
        img.word(s + value_at, addr(code + 16 * i));
        img.out.put(code + 16 * i, 0xc3, 1);
    }
    img.out.bytes[dynstr..dynstr + strtab.len()].copy_from_slice(&strtab);

    // DT_HASH: nbucket, nchain, buckets, chains.
    let mut buckets = vec![0u64; nb];
    let mut chain = vec![0u64; nentries];
    for (i, n) in names.iter().enumerate().rev() {
        let b = sysv_hash(n.as_bytes()) as usize % nb;
        chain[i + 1] = buckets[b];
        buckets[b] = i as u64 + 1;
    }
    let words = [nb as u64, nentries as u64]
        .into_iter()
        .chain(buckets)
        .chain(chain);
    for (k, v) in words.enumerate() {
        img.field(sysv + k * sysv_word, sysv_word, v);
    }

    // DT_GNU_HASH: nbuckets, symoffset, Bloom size and shift, a pass-all Bloom word,
    // buckets, chains (hash with the low bit marking a chain's end).
    for (k, v) in [nb as u64, 1, 1, 6].into_iter().enumerate() {
        img.field(gnu + 4 * k, 4, v);
    }
    img.word(gnu + 16, u64::MAX >> (64 - bits));
    for b in 0..nb {
        let first = names
            .iter()
            .position(|n| gnu_hash(n.as_bytes()) as usize % nb == b);
        img.field(gnu_buckets + 4 * b, 4, first.map_or(0, |i| i as u64 + 1));
    }
    for (i, n) in names.iter().enumerate() {
        let h = gnu_hash(n.as_bytes());
        let last = names
            .get(i + 1)
            .is_none_or(|m| gnu_hash(m.as_bytes()) as usize % nb != h as usize % nb);
        img.field(gnu_chains + 4 * i, 4, u64::from((h & !1) | u32::from(last)));
    }

    // DT_VERSYM (every symbol in the first version) and DT_VERDEF: the file, then each
    // version (vd_version, flags, index, count, aux 20, next 28), each with its verdaux.
    for i in 0..nsyms {
        img.field(versym + 2 * (i + 1), 2, 2);
    }
    for k in 0..=nver {
        let e = verdef + 28 * k;
        let name = if k == 0 { soname_at } else { ver_at[k - 1] };
        for (at, v) in [(0, 1), (2, u64::from(k == 0)), (4, k as u64 + 1), (6, 1)] {
            img.field(e + at, 2, v);
        }
        let next = if k < nver { 28 } else { 0 };
        for (at, v) in [(12, 20), (16, next), (20, name), (24, 0)] {
            img.field(e + at, 4, v);
        }
    }

    // The edits. Index `fields.len()` names the image's length.
    let mut len = total as u64;
    while d.more() {
        let i = d.0.int_in_range(0..=img.fields.len())?;
        match img.fields.get(i).copied() {
            Some(f) => {
                let v = d.bend(8 * f.size as u32, f.value)?;
                img.set(f, v);
            }
            None => len = d.bend(20, len)?, // up to 1 MiB
        }
    }
    img.out.bytes.resize(len as usize, 0);
    Ok(img.out.bytes)
}
