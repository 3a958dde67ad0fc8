//! Builds small but complete ELF shared objects in memory, of either class and byte
//! order, with a chosen set of symbol tables, so parser tests can cover every shape a
//! vDSO takes (and malformed ones) without depending on the running kernel.

#![allow(dead_code)]

/// What to put in the image.
#[derive(Clone, Debug)]
pub struct Spec {
    pub elf64: bool,
    pub big_endian: bool,
    pub machine: u16,
    /// Link-time address of file offset 0 (the kernel's vDSOs use 0 or a high address).
    pub vaddr: u64,
    pub sysv_hash: bool,
    pub gnu_hash: bool,
    /// Version names; symbol version `i` refers to `versions[i - 2]` (0/1: unversioned).
    pub versions: Vec<&'static str>,
    /// Emit DT_VERSYM/DT_VERDEF (when `versions` is non-empty).
    pub versioned: bool,
    /// (name, version index, st_info)
    pub symbols: Vec<(&'static str, u16, u8)>,
}

pub const FUNC_GLOBAL: u8 = 0x12;
pub const NOTYPE_GLOBAL: u8 = 0x10;
pub const FUNC_WEAK: u8 = 0x22;
pub const FUNC_LOCAL: u8 = 0x02;
pub const OBJECT_GLOBAL: u8 = 0x11;

impl Spec {
    /// An x86-64-like vDSO with both hash tables and `LINUX_2.6` versions.
    pub fn x86_64_like() -> Spec {
        Spec {
            elf64: true,
            big_endian: false,
            machine: 62,
            vaddr: 0,
            sysv_hash: true,
            gnu_hash: true,
            versions: vec!["LINUX_2.6"],
            versioned: true,
            symbols: vec![
                ("__vdso_clock_gettime", 2, FUNC_GLOBAL),
                ("__vdso_gettimeofday", 2, FUNC_GLOBAL),
                ("__vdso_time", 2, FUNC_GLOBAL),
                ("__vdso_getcpu", 2, FUNC_GLOBAL),
                ("__vdso_clock_getres", 2, FUNC_GLOBAL),
                ("clock_gettime", 2, FUNC_WEAK),
            ],
        }
    }
}

/// Where things landed, for tests that corrupt a specific field.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    pub phoff: usize,
    pub dynamic: usize,
    pub dynsym: usize,
    pub dynstr: usize,
    pub sysv_hash: Option<usize>,
    pub gnu_hash: Option<usize>,
    pub versym: Option<usize>,
    pub verdef: Option<usize>,
    /// Symbol names in table order (GNU hash sorts them) and their code offsets.
    pub order: Vec<&'static str>,
    pub code: Vec<usize>,
    pub len: usize,
}

/// An image being written: fields of the class's sizes in its byte order, growing the
/// buffer as needed. Shared with the structure-aware fuzz target.
pub struct Out {
    pub bytes: Vec<u8>,
    pub be: bool,
    pub elf64: bool,
}

impl Out {
    /// Writes the low `size` bytes of `v` at `at`.
    pub fn put(&mut self, at: usize, v: u64, size: usize) {
        if self.bytes.len() < at + size {
            self.bytes.resize(at + size, 0);
        }
        let b = v.to_le_bytes();
        for i in 0..size {
            let byte = if self.be { b[size - 1 - i] } else { b[i] };
            self.bytes[at + i] = byte;
        }
    }
    /// Writes a class-sized word (4 or 8 bytes).
    pub fn word(&mut self, at: usize, v: u64) {
        let size = if self.elf64 { 8 } else { 4 };
        self.put(at, v, size);
    }
    /// Pads the buffer to a multiple of `a` and returns its new length.
    pub fn align(&mut self, a: usize) -> usize {
        let len = self.bytes.len().div_ceil(a) * a;
        self.bytes.resize(len, 0);
        len
    }
}

/// The SysV ELF hash (`DT_HASH`).
pub fn sysv_hash(name: &[u8]) -> u32 {
    let mut h: u32 = 0;
    for &c in name {
        h = (h << 4).wrapping_add(c as u32);
        let g = h & 0xf000_0000;
        h ^= g >> 24;
        h &= !g;
    }
    h
}

/// The GNU (DJB) hash (`DT_GNU_HASH`).
pub fn gnu_hash(name: &[u8]) -> u32 {
    name.iter()
        .fold(5381u32, |h, &c| h.wrapping_mul(33).wrapping_add(c as u32))
}

/// Builds the image described by `spec`.
pub fn build(spec: &Spec) -> (Vec<u8>, Layout) {
    let mut spec = spec.clone();
    let e64 = spec.elf64;
    let nb = 3usize; // hash buckets
    if spec.gnu_hash {
        // GNU hash requires symbols grouped by bucket.
        spec.symbols
            .sort_by_key(|(n, _, _)| gnu_hash(n.as_bytes()) as usize % nb);
    }
    let mut o = Out {
        bytes: vec![0; if e64 { 64 } else { 52 }],
        be: spec.big_endian,
        elf64: e64,
    };
    let mut l = Layout {
        order: spec.symbols.iter().map(|s| s.0).collect(),
        ..Layout::default()
    };
    let phentsize = if e64 { 56 } else { 32 };
    l.phoff = o.bytes.len();
    o.bytes.resize(l.phoff + 2 * phentsize, 0);

    // Strings: "\0", symbol names, version names, soname.
    let mut strtab = vec![0u8];
    let mut intern = |s: &str| {
        let at = strtab.len();
        strtab.extend_from_slice(s.as_bytes());
        strtab.push(0);
        at
    };
    let sym_names: Vec<usize> = spec.symbols.iter().map(|(n, _, _)| intern(n)).collect();
    let soname = intern("linux-vdso.so.1");
    let ver_names: Vec<usize> = spec.versions.iter().map(|v| intern(v)).collect();

    // Code: 16 bytes of `ret`-ish filler per symbol.
    let code_at = o.align(16);
    for i in 0..spec.symbols.len() {
        l.code.push(code_at + 16 * i);
        o.put(code_at + 16 * i, 0xc3, 1);
    }
    o.bytes.resize(code_at + 16 * spec.symbols.len(), 0);

    let nsyms = spec.symbols.len() + 1;
    let syment = if e64 { 24 } else { 16 };
    l.dynsym = o.align(8);
    o.bytes.resize(l.dynsym + nsyms * syment, 0);
    for (i, (_, _, info)) in spec.symbols.iter().enumerate() {
        let s = l.dynsym + (i + 1) * syment;
        let value = spec.vaddr + l.code[i] as u64;
        o.put(s, sym_names[i] as u64, 4);
        if e64 {
            o.put(s + 4, *info as u64, 1);
            o.put(s + 6, 7, 2); // a section index: defined
            o.put(s + 8, value, 8);
            o.put(s + 16, 16, 8);
        } else {
            o.put(s + 4, value, 4);
            o.put(s + 8, 16, 4);
            o.put(s + 12, *info as u64, 1);
            o.put(s + 14, 7, 2);
        }
    }

    l.dynstr = o.bytes.len();
    o.bytes.extend_from_slice(&strtab);

    if spec.sysv_hash {
        let word = if e64 && spec.machine == 22 { 8 } else { 4 };
        let at = o.align(8);
        l.sysv_hash = Some(at);
        let mut buckets = vec![0u64; nb];
        let mut chain = vec![0u64; nsyms];
        for (i, (n, _, _)) in spec.symbols.iter().enumerate().rev() {
            let b = sysv_hash(n.as_bytes()) as usize % nb;
            chain[i + 1] = buckets[b];
            buckets[b] = (i + 1) as u64;
        }
        let mut p = at;
        for v in [nb as u64, nsyms as u64]
            .into_iter()
            .chain(buckets)
            .chain(chain)
        {
            o.put(p, v, word);
            p += word;
        }
    }

    if spec.gnu_hash {
        let at = o.align(8);
        l.gnu_hash = Some(at);
        let bloom_words = 1usize;
        let wsize = if e64 { 8 } else { 4 };
        o.put(at, nb as u64, 4);
        o.put(at + 4, 1, 4); // symoffset: every real symbol is hashed
        o.put(at + 8, bloom_words as u64, 4);
        o.put(at + 12, 6, 4);
        o.word(at + 16, u64::MAX >> if e64 { 0 } else { 32 }); // a Bloom filter that passes all
        let buckets = at + 16 + bloom_words * wsize;
        let chains = buckets + nb * 4;
        for b in 0..nb {
            let first = spec
                .symbols
                .iter()
                .position(|(n, _, _)| gnu_hash(n.as_bytes()) as usize % nb == b);
            o.put(buckets + 4 * b, first.map_or(0, |i| i as u64 + 1), 4);
        }
        for (i, (n, _, _)) in spec.symbols.iter().enumerate() {
            let h = gnu_hash(n.as_bytes());
            let last = spec
                .symbols
                .get(i + 1)
                .is_none_or(|(m, _, _)| gnu_hash(m.as_bytes()) as usize % nb != h as usize % nb);
            o.put(chains + 4 * i, ((h & !1) | last as u32) as u64, 4);
        }
    }

    if spec.versioned && !spec.versions.is_empty() {
        let at = o.align(2);
        l.versym = Some(at);
        for (i, (_, v, _)) in spec.symbols.iter().enumerate() {
            o.put(at + 2 * (i + 1), *v as u64, 2);
        }
        o.bytes.resize(at + 2 * nsyms, 0);
        let at = o.align(4);
        l.verdef = Some(at);
        // The base definition (the file), then one per version.
        let names: Vec<(usize, u16, u16)> = std::iter::once((soname, 1u16, 1u16))
            .chain(
                ver_names
                    .iter()
                    .enumerate()
                    .map(|(i, &n)| (n, 0u16, i as u16 + 2)),
            )
            .collect();
        for (k, &(name, flags, ndx)) in names.iter().enumerate() {
            let d = at + k * 28;
            o.put(d, 1, 2);
            o.put(d + 2, flags as u64, 2);
            o.put(d + 4, ndx as u64, 2);
            o.put(d + 6, 1, 2);
            o.put(d + 8, 0, 4); // vd_hash (unchecked by readers of the vDSO)
            o.put(d + 12, 20, 4); // vd_aux
            o.put(d + 16, if k + 1 < names.len() { 28 } else { 0 }, 4);
            o.put(d + 20, name as u64, 4);
            o.put(d + 24, 0, 4);
        }
    }

    // The dynamic table.
    let dsize = if e64 { 16 } else { 8 };
    l.dynamic = o.align(8);
    let va = |off: usize| spec.vaddr + off as u64;
    let mut entries = vec![
        (5u64, va(l.dynstr)),
        (6, va(l.dynsym)),
        (10, strtab.len() as u64),
        (11, syment as u64),
    ];
    if let Some(h) = l.sysv_hash {
        entries.push((4, va(h)));
    }
    if let Some(h) = l.gnu_hash {
        entries.push((0x6fff_fef5, va(h)));
    }
    if let (Some(s), Some(d)) = (l.versym, l.verdef) {
        entries.push((0x6fff_fff0, va(s)));
        entries.push((0x6fff_fffc, va(d)));
        entries.push((0x6fff_fffd, spec.versions.len() as u64 + 1));
    }
    entries.push((0, 0));
    for (i, (tag, val)) in entries.iter().enumerate() {
        o.word(l.dynamic + i * dsize, *tag);
        o.word(l.dynamic + i * dsize + dsize / 2, *val);
    }
    let dyn_len = entries.len() * dsize;
    l.len = o.bytes.len();

    // Header and program headers.
    o.bytes[..4].copy_from_slice(b"\x7fELF");
    o.bytes[4] = if e64 { 2 } else { 1 };
    o.bytes[5] = if spec.big_endian { 2 } else { 1 };
    o.bytes[6] = 1;
    o.put(16, 3, 2); // ET_DYN
    o.put(18, spec.machine as u64, 2);
    o.put(20, 1, 4);
    let (phoff_at, shoff_at, ehsize_at) = if e64 { (32, 40, 52) } else { (28, 32, 40) };
    o.word(phoff_at, l.phoff as u64);
    o.word(shoff_at, 0);
    o.put(ehsize_at, if e64 { 64 } else { 52 }, 2);
    o.put(ehsize_at + 2, phentsize as u64, 2);
    o.put(ehsize_at + 4, 2, 2);
    let ph = |i: usize| l.phoff + i * phentsize;
    let total = l.len as u64;
    for (i, (ptype, off, size)) in [(1u32, 0u64, total), (2, l.dynamic as u64, dyn_len as u64)]
        .into_iter()
        .enumerate()
    {
        let p = ph(i);
        o.put(p, ptype as u64, 4);
        if e64 {
            o.put(p + 4, 5, 4);
            o.put(p + 8, off, 8);
            o.put(p + 16, spec.vaddr + off, 8);
            o.put(p + 24, spec.vaddr + off, 8);
            o.put(p + 32, size, 8);
            o.put(p + 40, size, 8);
        } else {
            o.put(p + 4, off, 4);
            o.put(p + 8, spec.vaddr + off, 4);
            o.put(p + 12, spec.vaddr + off, 4);
            o.put(p + 16, size, 4);
            o.put(p + 20, size, 4);
            o.put(p + 24, 5, 4);
        }
    }
    (o.bytes, l)
}
