//! A deliberately tiny, independent ELF64 little-endian reader for the tests: just enough to
//! find the dynamic table and the hash tables of a real vDSO so tests can corrupt them on
//! purpose. Panics on anything unexpected; it is only ever given real images.

/// Dynamic-table tags the tests touch.
pub const DT_NULL: u64 = 0;
pub const DT_HASH: u64 = 4;
pub const DT_DEBUG: u64 = 21;
pub const DT_GNU_HASH: u64 = 0x6fff_fef5;

const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;

pub fn u16_at(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes(b[off..off + 2].try_into().unwrap())
}
pub fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().unwrap())
}
pub fn u64_at(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().unwrap())
}
pub fn put_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}
pub fn put_u64(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

/// True for a 64-bit little-endian ELF image (the only kind this reader handles).
pub fn is_elf64_le(b: &[u8]) -> bool {
    b.len() >= 64 && b[..4] == *b"\x7fELF" && b[4] == 2 && b[5] == 1
}

/// A program header: (type, file offset, virtual address, file size).
pub fn phdrs(b: &[u8]) -> Vec<(u32, u64, u64, u64)> {
    let phoff = u64_at(b, 0x20) as usize;
    let phentsize = usize::from(u16_at(b, 0x36));
    let phnum = usize::from(u16_at(b, 0x38));
    (0..phnum)
        .map(|i| {
            let p = phoff + i * phentsize;
            (
                u32_at(b, p),
                u64_at(b, p + 8),
                u64_at(b, p + 16),
                u64_at(b, p + 32),
            )
        })
        .collect()
}

/// End of the program-header table: no image shorter than this can be parsed.
pub fn phdr_end(b: &[u8]) -> usize {
    u64_at(b, 0x20) as usize + usize::from(u16_at(b, 0x36)) * usize::from(u16_at(b, 0x38))
}

/// File offset of a virtual address, through the first PT_LOAD.
pub fn vaddr_to_off(b: &[u8], vaddr: u64) -> usize {
    let (_, off, va, _) = phdrs(b)
        .into_iter()
        .find(|p| p.0 == PT_LOAD)
        .expect("PT_LOAD");
    (vaddr - va + off) as usize
}

/// The dynamic table as (file offset of the entry, tag, value), up to DT_NULL.
pub fn dyn_entries(b: &[u8]) -> Vec<(usize, u64, u64)> {
    let (_, off, _, size) = phdrs(b)
        .into_iter()
        .find(|p| p.0 == PT_DYNAMIC)
        .expect("PT_DYNAMIC");
    let mut out = Vec::new();
    for i in 0..(size as usize / 16) {
        let e = off as usize + i * 16;
        let tag = u64_at(b, e);
        if tag == DT_NULL {
            break;
        }
        out.push((e, tag, u64_at(b, e + 8)));
    }
    out
}

/// (entry offset, table file offset) of the dynamic entry with `tag`, if present.
pub fn find_dyn(b: &[u8], tag: u64) -> Option<(usize, usize)> {
    dyn_entries(b)
        .into_iter()
        .find(|e| e.1 == tag)
        .map(|(e, _, v)| (e, vaddr_to_off(b, v)))
}

/// Changes the tag of the `tag` entry to DT_DEBUG, which readers ignore: the table "vanishes".
pub fn hide_dyn(b: &mut [u8], tag: u64) -> bool {
    match find_dyn(b, tag) {
        Some((entry, _)) => {
            put_u64(b, entry, DT_DEBUG);
            true
        }
        None => false,
    }
}
