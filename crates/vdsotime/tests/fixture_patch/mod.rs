//! Small ELF editors for the fixture tests: they turn a real vDSO image into the variants
//! other kernels and emulators produce (no DT_HASH, no DT_VERDEF, `STT_NOTYPE` symbols,
//! zeroed names, a foreign `e_machine`). Independent of the library's parser on purpose,
//! so a bug there cannot hide in the test's own reading; panics on anything unexpected.
// Each test file uses the part it needs.
#![allow(dead_code)]

pub const DT_NULL: u64 = 0;
pub const DT_HASH: u64 = 4;
pub const DT_STRTAB: u64 = 5;
pub const DT_GNU_HASH: u64 = 0x6fff_fef5;
pub const DT_VERSYM: u64 = 0x6fff_fff0;
pub const DT_VERDEF: u64 = 0x6fff_fffc;
pub const DT_VERDEFNUM: u64 = 0x6fff_fffd;
pub const STT_NOTYPE: u8 = 0;
pub const STT_OBJECT: u8 = 1;
pub const STT_FUNC: u8 = 2;
const PT_DYNAMIC: u32 = 2;
const SHT_DYNSYM: u32 = 11;

/// A copy of an ELF image, with its class and byte order.
#[derive(Clone, Debug)]
pub struct Elf {
    pub bytes: Vec<u8>,
    is64: bool,
    big: bool,
}

impl Elf {
    pub fn new(bytes: &[u8]) -> Elf {
        assert_eq!(&bytes[..4], b"\x7fELF", "fixture is not ELF");
        Elf {
            is64: bytes[4] == 2,
            big: bytes[5] == 2,
            bytes: bytes.to_vec(),
        }
    }

    fn read(&self, off: usize, len: usize) -> u64 {
        let b = &self.bytes[off..off + len];
        let mut v = 0u64;
        for i in 0..len {
            let byte = if self.big { b[i] } else { b[len - 1 - i] };
            v = v << 8 | u64::from(byte);
        }
        v
    }

    fn write(&mut self, off: usize, len: usize, mut v: u64) {
        for i in 0..len {
            let at = if self.big { off + len - 1 - i } else { off + i };
            self.bytes[at] = v as u8;
            v >>= 8;
        }
    }

    /// Size of an address-sized field.
    fn word(&self) -> usize {
        if self.is64 {
            8
        } else {
            4
        }
    }

    /// Moves the section header table `gap` bytes past the end (a copy, `e_shoff`
    /// updated): the same image, longer by `gap` and the table.
    pub fn move_section_headers_past_end(&mut self, gap: usize) {
        let (shoff_at, shentsize_at, shnum_at) = if self.is64 {
            (0x28, 0x3a, 0x3c)
        } else {
            (0x20, 0x2e, 0x30)
        };
        let shoff = self.read(shoff_at, self.word()) as usize;
        let size = (self.read(shentsize_at, 2) * self.read(shnum_at, 2)) as usize;
        let table = self.bytes[shoff..shoff + size].to_vec();
        let moved = self.bytes.len() + gap;
        self.bytes.resize(moved, 0);
        self.bytes.extend_from_slice(&table);
        self.write(shoff_at, self.word(), moved as u64);
    }

    pub fn machine(&self) -> u16 {
        self.read(18, 2) as u16
    }

    pub fn set_machine(&mut self, machine: u16) {
        self.write(18, 2, u64::from(machine));
    }

    /// (p_type, p_offset, p_vaddr, p_filesz) of every program header.
    fn phdrs(&self) -> Vec<(u32, usize, u64, usize)> {
        let (phoff, phentsize, phnum) = if self.is64 {
            (self.read(0x20, 8), self.read(0x36, 2), self.read(0x38, 2))
        } else {
            (self.read(0x1c, 4), self.read(0x2a, 2), self.read(0x2c, 2))
        };
        (0..phnum as usize)
            .map(|i| {
                let p = phoff as usize + i * phentsize as usize;
                if self.is64 {
                    let t = self.read(p, 4) as u32;
                    (
                        t,
                        self.read(p + 8, 8) as usize,
                        self.read(p + 16, 8),
                        self.read(p + 32, 8) as usize,
                    )
                } else {
                    let t = self.read(p, 4) as u32;
                    (
                        t,
                        self.read(p + 4, 4) as usize,
                        self.read(p + 8, 4),
                        self.read(p + 16, 4) as usize,
                    )
                }
            })
            .collect()
    }

    /// File offset of the dynamic table and its entry count (up to its end, not DT_NULL).
    fn dynamic_table(&self) -> (usize, usize) {
        let (_, off, _, size) = self
            .phdrs()
            .into_iter()
            .find(|p| p.0 == PT_DYNAMIC)
            .expect("PT_DYNAMIC");
        (off, size / (2 * self.word()))
    }

    /// The dynamic entries before DT_NULL.
    pub fn dynamic(&self) -> Vec<(u64, u64)> {
        let (off, n) = self.dynamic_table();
        let w = self.word();
        (0..n)
            .map(|i| {
                (
                    self.read(off + 2 * w * i, w),
                    self.read(off + 2 * w * i + w, w),
                )
            })
            .take_while(|&(tag, _)| tag != DT_NULL)
            .collect()
    }

    pub fn has_dynamic(&self, tag: u64) -> bool {
        self.dynamic_value(tag).is_some()
    }

    /// The value (usually an address) of the first entry with `tag`.
    pub fn dynamic_value(&self, tag: u64) -> Option<u64> {
        self.dynamic()
            .iter()
            .find(|&&(t, _)| t == tag)
            .map(|&(_, v)| v)
    }

    /// The `len`-byte field at load address `addr`, in the image's byte order.
    pub fn read_at_address(&self, addr: u64, len: usize) -> u64 {
        self.read(self.offset_of(addr), len)
    }

    /// Deletes every entry with `tag`, moving later ones up as a linker would have laid
    /// them out; the freed slots become DT_NULL.
    pub fn remove_dynamic(&mut self, tag: u64) {
        assert!(self.has_dynamic(tag), "no dynamic tag {tag:#x} to remove");
        let kept: Vec<_> = self
            .dynamic()
            .into_iter()
            .filter(|&(t, _)| t != tag)
            .collect();
        let (off, n) = self.dynamic_table();
        let w = self.word();
        for i in 0..n {
            let (t, v) = kept.get(i).copied().unwrap_or((DT_NULL, 0));
            self.write(off + 2 * w * i, w, t);
            self.write(off + 2 * w * i + w, w, v);
        }
    }

    /// File offset of the loaded byte at address `addr` (dynamic entries hold addresses).
    fn offset_of(&self, addr: u64) -> usize {
        let (_, off, vaddr, _) = self
            .phdrs()
            .into_iter()
            .find(|p| p.0 == 1 && addr >= p.2 && addr < p.2 + p.3 as u64)
            .expect("address inside a PT_LOAD");
        off + (addr - vaddr) as usize
    }

    /// (offset, size, entsize) of `.dynsym`, from the section headers.
    fn dynsym(&self) -> (usize, usize, usize) {
        let (shoff, shentsize, shnum) = if self.is64 {
            (self.read(0x28, 8), self.read(0x3a, 2), self.read(0x3c, 2))
        } else {
            (self.read(0x20, 4), self.read(0x2e, 2), self.read(0x30, 2))
        };
        (0..shnum as usize)
            .map(|i| shoff as usize + i * shentsize as usize)
            .find(|&s| self.read(s + 4, 4) as u32 == SHT_DYNSYM)
            .map(|s| {
                if self.is64 {
                    (
                        self.read(s + 24, 8) as usize,
                        self.read(s + 32, 8) as usize,
                        self.read(s + 56, 8) as usize,
                    )
                } else {
                    (
                        self.read(s + 16, 4) as usize,
                        self.read(s + 20, 4) as usize,
                        self.read(s + 36, 4) as usize,
                    )
                }
            })
            .expect(".dynsym section header")
    }

    /// Offset of the `Elf*_Sym` named `name`.
    fn symbol_entry(&self, name: &str) -> usize {
        let strtab = self.offset_of(self.dynamic_value(DT_STRTAB).expect("DT_STRTAB"));
        let (off, size, entsize) = self.dynsym();
        (0..size / entsize)
            .map(|i| off + i * entsize)
            .find(|&sym| {
                let at = strtab + self.read(sym, 4) as usize;
                let end = at + self.bytes[at..].iter().position(|&b| b == 0).expect("NUL");
                &self.bytes[at..end] == name.as_bytes()
            })
            .unwrap_or_else(|| panic!("no symbol {name} in the image"))
    }

    /// Offset of a symbol's `st_info` byte.
    fn info_offset(&self, name: &str) -> usize {
        self.symbol_entry(name) + if self.is64 { 4 } else { 12 }
    }

    /// Sets the symbol's type (low nibble of `st_info`), keeping its binding.
    pub fn set_symbol_type(&mut self, name: &str, kind: u8) {
        let at = self.info_offset(name);
        self.bytes[at] = (self.bytes[at] & 0xf0) | kind;
    }

    pub fn symbol_type(&self, name: &str) -> u8 {
        self.bytes[self.info_offset(name)] & 0x0f
    }

    /// Points the symbol's name at the empty string, as arm kernels 5.5–5.7 did to
    /// their time32 symbols.
    pub fn zero_symbol_name(&mut self, name: &str) {
        let sym = self.symbol_entry(name);
        self.write(sym, 4, 0);
    }
}

/// A page-aligned, never-freed copy of `bytes`, as `Vdso::from_address` and
/// `init_from_image` require of a mapped vDSO (64 KiB-aligned: the largest Linux page).
pub fn leak_page_aligned(bytes: &[u8]) -> usize {
    const ALIGN: usize = 65536;
    let len = bytes.len().max(4096).next_multiple_of(4096);
    let buf: &'static mut [u8] = Box::leak(vec![0u8; len + ALIGN].into_boxed_slice());
    let start = buf.as_ptr().align_offset(ALIGN);
    buf[start..start + bytes.len()].copy_from_slice(bytes);
    buf[start..].as_ptr() as usize
}
