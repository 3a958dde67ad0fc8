//! Binding the process's own vDSO applies musl's rule for 32-bit arm: kernels 5.5–5.7
//! zeroed the names of the time32 symbols and left a broken `__vdso_clock_gettime64`, so
//! the time64 symbol is trusted only beside its time32 twin. The rule is not visible from
//! a parsed image (the parser only lists symbols), so this feeds `init_from_image` a copy
//! of the real vDSO with the time32 name zeroed and asks `path` what was bound.
//!
//! Only `path` is asked: the copy is not executable, so nothing may call into it. One test
//! function, as `init_from_image` changes the whole process's binding.

mod fixture_patch;
mod support;

use fixture_patch::{leak_page_aligned, Elf};
use vdsotime::{arch, ClockId, Function, Path};

fn clock_gettime_path() -> Path {
    vdsotime::path(Function::ClockGettime(ClockId::MONOTONIC))
}

#[test]
fn time64_is_trusted_only_where_the_table_allows() {
    let Some(own) = vdsotime::vdso() else {
        return support::skip::skip(
            "time64_rule",
            "vdso",
            "no vDSO in this process: no image to copy and rebind",
        );
    };
    let table = arch::NATIVE;
    let time32 = table
        .clock_gettime
        .expect("every table names clock_gettime");
    let real_path = clock_gettime_path();

    // SAFETY: a leaked, page-aligned copy of at least 4 KiB stays mapped and unchanged;
    // only `path` is asked while it is bound, so its (non-executable) code never runs.
    unsafe { vdsotime::init_from_image(leak_page_aligned(own.bytes())) };
    assert_eq!(
        clock_gettime_path(),
        real_path,
        "an unmodified copy binds the same symbol"
    );

    let mut elf = Elf::new(own.bytes());
    elf.zero_symbol_name(time32);
    // SAFETY: as above.
    unsafe { vdsotime::init_from_image(leak_page_aligned(&elf.bytes)) };
    let patched = clock_gettime_path();

    // SAFETY: the process's own vDSO, mapped by the kernel for the life of the process.
    unsafe { vdsotime::init_from_image(own.base()) };
    assert_eq!(
        clock_gettime_path(),
        real_path,
        "the real vDSO is bound again"
    );

    let expected = match table.clock_gettime64 {
        Some(_) if table.time64_needs_time32 => Path::Syscall,
        Some(time64) => Path::Vdso {
            symbol: time64,
            version: Some(table.version),
        },
        None => Path::Syscall,
    };
    assert_eq!(patched, expected, "{} with {time32} zeroed", table.name);
}
