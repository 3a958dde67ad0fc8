//! The reader's form a process's first call uses (this process's layout, fixed at compile
//! time) on the bytes a target made: it must never panic, must accept every image of this
//! layout that `Vdso::parse` accepts, and must find what `Vdso::lookup` finds.

use vdsotime::{ElfError, Vdso};

/// Looks up every symbol of this architecture's table and of the parsed image with the
/// first call's reader, against `parsed`, what `Vdso::parse(data)` gave.
pub fn check(data: &[u8], parsed: &Result<Vdso<'_>, ElfError>) {
    let table = vdsotime::arch::NATIVE;
    let general = parsed.as_ref().ok().filter(|v| v.is_native());
    let mut names: Vec<&str> = table.symbols().collect();
    if let Some(v) = general {
        names.extend(v.symbols().map(|s| s.name));
    }
    for name in names {
        let first_call = vdsotime::elf::fuzz_lookup(data, name, table.version);
        if let Some(v) = general {
            let want = v
                .lookup(name, Some(table.version))
                .map(|s| (s.address, s.version.is_some()));
            assert_eq!(first_call, Ok(want), "the first call's reader on {name}");
        }
    }
}
