//! Invariants that every image `Vdso::parse` accepts must satisfy.
//!
//! Shared by the fuzz target (`fuzz/fuzz_targets/parse.rs`, through `#[path]`) and the
//! mutation and bad-input tests, so a violation found by one is checked the same way by all.
//! Each check returns a description of the first violation instead of panicking, so callers
//! can report the offending input alongside it.

use vdsotime::{arch, ElfClass, Endian, Vdso};

/// One symbol as plain data, comparable across parses of different buffers.
pub type SymKey = (String, Option<String>, usize);

/// A version string that no vDSO defines.
const BOGUS_VERSION: &str = "VDSOTIME_BOGUS_9.9";

/// Every entry-point name of every architecture table, with the table's version node.
pub fn table_names() -> Vec<(&'static str, &'static str)> {
    let mut names = Vec::new();
    for t in arch::ALL.iter() {
        let entries = [
            t.clock_gettime,
            t.clock_gettime64,
            t.clock_getres,
            t.clock_getres64,
            t.gettimeofday,
            t.time,
            t.getcpu,
        ];
        for name in entries.into_iter().flatten() {
            names.push((name, t.version));
        }
    }
    names
}

/// True when `inner` lies entirely inside `outer` (pointer range containment).
fn within(outer: &[u8], inner: &[u8]) -> bool {
    let o = outer.as_ptr() as usize;
    let i = inner.as_ptr() as usize;
    i >= o && i + inner.len() <= o + outer.len()
}

fn class_code(c: ElfClass) -> u8 {
    match c {
        ElfClass::Elf32 => 1,
        ElfClass::Elf64 => 2,
    }
}

fn endian_code(e: Endian) -> u8 {
    match e {
        Endian::Little => 1,
        Endian::Big => 2,
    }
}

/// The symbols of `v` as plain data, capped so a looping iterator cannot hang the checker.
pub fn symbol_keys(v: &Vdso<'_>, cap: usize) -> Vec<SymKey> {
    v.symbols()
        .take(cap)
        .map(|s| (s.name.to_owned(), s.version.map(str::to_owned), s.offset))
        .collect()
}

/// Checks the invariants of an accepted image; `input` is the slice given to `parse`.
///
/// Returns the list of symbols on success, for callers that compare parses.
pub fn check_parsed(input: &[u8], v: &Vdso<'_>) -> Result<Vec<SymKey>, String> {
    let bytes = v.bytes();
    if bytes.as_ptr() != input.as_ptr() || bytes.len() > input.len() {
        return Err(format!(
            "bytes() is not a prefix of the input ({:p}+{} vs {:p}+{})",
            bytes.as_ptr(),
            bytes.len(),
            input.as_ptr(),
            input.len()
        ));
    }
    if v.base() != bytes.as_ptr() as usize {
        return Err(format!(
            "base() {:#x} is not the address of bytes()[0]",
            v.base()
        ));
    }
    // The header fields must be those in the bytes (an accepted image has a full e_ident).
    if bytes.len() < 20 {
        return Err(format!("accepted an image of {} bytes", bytes.len()));
    }
    if bytes[..4] != *b"\x7fELF" {
        return Err("accepted an image without the ELF magic".into());
    }
    if class_code(v.class()) != bytes[4] || endian_code(v.endian()) != bytes[5] {
        return Err(format!(
            "class/endian {:?}/{:?} disagree with e_ident {}/{}",
            v.class(),
            v.endian(),
            bytes[4],
            bytes[5]
        ));
    }
    let machine = match v.endian() {
        Endian::Little => u16::from_le_bytes([bytes[18], bytes[19]]),
        Endian::Big => u16::from_be_bytes([bytes[18], bytes[19]]),
    };
    if v.machine() != machine {
        return Err(format!(
            "machine() {} but e_machine is {machine}",
            v.machine()
        ));
    }
    if let Some(t) = v.arch() {
        if t.machine != machine || class_code(t.class) != bytes[4] {
            return Err(format!(
                "arch() {} does not match e_machine {machine}",
                t.name
            ));
        }
    }

    // Each symbol needs its own symbol-table entry (16 bytes at least) inside the image.
    let bound = bytes.len() / 16;
    let syms: Vec<_> = v.symbols().take(bound + 1).collect();
    if syms.len() > bound {
        return Err(format!(
            "symbols() yields more than {bound} symbols for {} bytes",
            bytes.len()
        ));
    }
    for s in &syms {
        if s.name.is_empty() {
            return Err(format!("empty symbol name at offset {:#x}", s.offset));
        }
        if !within(bytes, s.name.as_bytes()) {
            return Err(format!(
                "name of {:?} does not point into the image",
                s.name
            ));
        }
        if s.offset >= bytes.len() {
            return Err(format!(
                "{:?} at offset {:#x} is outside the {}-byte image",
                s.name,
                s.offset,
                bytes.len()
            ));
        }
        if s.address != v.base().wrapping_add(s.offset) {
            return Err(format!("{:?}: address != base + offset", s.name));
        }
        match s.version {
            Some(ver) if !v.has_versions() => {
                return Err(format!(
                    "{:?} has version {ver:?} but has_versions() is false",
                    s.name
                ));
            }
            Some(ver) if !within(bytes, ver.as_bytes()) => {
                return Err(format!(
                    "version of {:?} does not point into the image",
                    s.name
                ));
            }
            _ => {}
        }
    }
    let keys: Vec<SymKey> = syms
        .iter()
        .map(|s| (s.name.to_owned(), s.version.map(str::to_owned), s.offset))
        .collect();
    if symbol_keys(v, bound + 1) != keys {
        return Err("two iterations of symbols() differ".into());
    }

    // Every lookup result must be one of the listed symbols, under the requested name/version.
    let mut queries: Vec<(String, Option<String>)> = Vec::new();
    for (name, version) in table_names() {
        queries.push((name.into(), None));
        queries.push((name.into(), Some(version.into())));
        queries.push((name.into(), Some(BOGUS_VERSION.into())));
    }
    for (name, version, _) in keys.iter().take(64) {
        queries.push((name.clone(), None));
        queries.push((name.clone(), version.clone()));
    }
    for (name, version) in &queries {
        let Some(s) = v.lookup(name, version.as_deref()) else {
            continue;
        };
        if s.name != name {
            return Err(format!("lookup({name:?}) returned {:?}", s.name));
        }
        if let (Some(want), Some(got)) = (version, s.version) {
            if want != got {
                return Err(format!(
                    "lookup({name:?}, {want:?}) returned version {got:?}"
                ));
            }
        }
        let key = (s.name.to_owned(), s.version.map(str::to_owned), s.offset);
        if !keys.contains(&key) {
            return Err(format!(
                "lookup({name:?}, {version:?}) = {key:?} is not in symbols()"
            ));
        }
        if s.address != v.base().wrapping_add(s.offset) {
            return Err(format!("lookup({name:?}): address != base + offset"));
        }
    }
    Ok(keys)
}

/// Stronger checks for a well-formed image (a real vDSO): every listed symbol is found by
/// lookup under its own version and without one, and the image has the architecture's
/// clock_gettime.
pub fn check_complete(input: &[u8], v: &Vdso<'_>) -> Result<Vec<SymKey>, String> {
    let keys = check_parsed(input, v)?;
    for (name, version, offset) in &keys {
        match v.lookup(name, version.as_deref()) {
            Some(s) if s.offset == *offset => {}
            other => {
                return Err(format!(
                    "{name:?}@{version:?} at {offset:#x} listed but lookup gives {:?}",
                    other.map(|s| s.offset)
                ))
            }
        }
        if v.lookup(name, None).is_none() {
            return Err(format!(
                "{name:?} listed but lookup(name, None) finds nothing"
            ));
        }
    }
    let t = v
        .arch()
        .ok_or_else(|| format!("no arch table for e_machine {}", v.machine()))?;
    let cg = t
        .clock_gettime64
        .or(t.clock_gettime)
        .ok_or("table without clock_gettime")?;
    if v.lookup(cg, Some(t.version)).is_none() {
        return Err(format!("{cg}@{} not found", t.version));
    }
    if v.lookup(cg, Some(BOGUS_VERSION)).is_some() && v.has_versions() {
        return Err(format!(
            "{cg} found under the bogus version {BOGUS_VERSION}"
        ));
    }
    Ok(keys)
}
