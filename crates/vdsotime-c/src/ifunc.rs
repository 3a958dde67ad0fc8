//! `vdsotime_time` and `vdsotime_gettimeofday` (and their `*64` twins, the same functions
//! on 64-bit targets) as GNU indirect functions: the dynamic linker asks [`resolve_time`]
//! or [`resolve_gettimeofday`] once and binds the caller's GOT slot straight to the
//! answer, the vDSO's own symbol where it has one. A call then costs what glibc's `time`
//! and `gettimeofday` cost, which glibc binds to the vDSO the same way; a wrapper would
//! add a jump and two loads to a call that is itself a few loads (its cost, measured:
//! docs/performance.md, "C: libvdsotime and the preload").
//!
//! A resolver runs while the dynamic linker relocates the object that refers to the
//! symbol. That is normally after this library (its dependents are relocated after it);
//! a library that uses these names without linking libvdsotime can come first, and glibc
//! then warns "Relink ... for IFUNC symbol". The resolver checks whether this library's
//! own relocations are done, with nothing that needs them, and answers the plain wrapper
//! if not. Only glibc runs IFUNC resolvers (not musl), and only on x86-64 has this been
//! run (the trampoline and the check are a few lines of asm per architecture); elsewhere
//! the wrappers are exported directly.
//!
//! The same code is in the static archive, and there a resolver may run where nothing
//! may be called: a `-static` or `-static-pie` program applies its IRELATIVE relocations
//! itself, before thread-local storage exists (`errno`, `getauxval`'s error) and in an
//! order that may leave the C library's own string and memory functions, IFUNCs too,
//! unresolved, which the compiler calls from the vDSO parser. So a resolver looks further
//! only in an object linked against shared libraries ([`loaded_by_the_dynamic_linker`]):
//! the dynamic linker relocates such an object after its dependencies, with TLS set up.
//! Elsewhere it answers the wrapper, which finds the vDSO on its first call, from `main`
//! or a constructor: the same fast paths (the rseq area among them, which a static
//! program registers only after its IRELATIVE relocations), one direct jump further.
//!
//! Not in the LD_PRELOAD library: there every program's libraries loaded after it are
//! relocated first, and glibc's warning appears in bash, ssh, curl, gpg and openssl.

use core::ffi::{c_int, c_void};

use crate::abi;

crate::load::at_load!();

/// Declares `$name` as an indirect function whose resolver is `$resolver`: a naked
/// function (so the name is exported like any `#[no_mangle]` one) retyped as
/// `STT_GNU_IFUNC`, whose body jumps to the resolver. Its Rust signature is never used.
macro_rules! ifunc {
    ($(#[$doc:meta])* $name:ident => $resolver:path) => {
        $(#[$doc])*
        #[unsafe(naked)]
        #[no_mangle]
        pub extern "C" fn $name() {
            core::arch::naked_asm!(
                concat!(".type ", stringify!($name), ", @gnu_indirect_function"),
                "jmp {r}",
                r = sym $resolver,
            );
        }
    };
}

ifunc! {
    /// `time_t vdsotime_time(time_t *t)`: `t` is NULL or writable.
    vdsotime_time => resolve_time
}
ifunc! {
    /// `int64_t vdsotime_time64(int64_t *t)`: the same function on 64-bit targets.
    vdsotime_time64 => resolve_time
}
ifunc! {
    /// `int vdsotime_gettimeofday(struct timeval *tv, void *tz)`: either may be NULL.
    vdsotime_gettimeofday => resolve_gettimeofday
}
ifunc! {
    /// `int vdsotime_gettimeofday64(struct vdsotime_timeval64 *, void *)`: the same
    /// function on 64-bit targets.
    vdsotime_gettimeofday64 => resolve_gettimeofday
}

/// A byte, and a word holding its address: a word the dynamic linker relocates
/// (`R_*_RELATIVE`) when it relocates this library. Both are reached PC-relative, so the
/// comparison in [`relocated`] needs no relocation itself.
static ANCHOR: u8 = 0;
struct Address(#[allow(dead_code)] /* read by the asm in `relocated` */ *const u8);
// SAFETY: the address is never written after relocation and never dereferenced.
unsafe impl Sync for Address {}
static ANCHOR_ADDRESS: Address = Address(&ANCHOR);

/// Whether the dynamic linker has relocated this library yet. In asm, because nothing
/// here may go through the GOT (not yet filled in): debug builds call even
/// `read_volatile` through it.
#[inline(never)]
fn relocated() -> bool {
    let (linked, actual): (*const u8, *const u8);
    // SAFETY: two PC-relative address computations and one load of a static of this
    // library; before relocation the word holds the link-time value, which is only
    // compared, never used.
    unsafe {
        core::arch::asm!(
            "mov {linked}, qword ptr [rip + {word}]",
            "lea {actual}, [rip + {anchor}]",
            word = sym ANCHOR_ADDRESS, anchor = sym ANCHOR,
            linked = out(reg) linked, actual = out(reg) actual,
            options(nostack, readonly, preserves_flags),
        );
    }
    linked == actual
}

/// Whether the object this code was linked into (this library, a program or a library
/// linking the static archive) names a shared library it needs (`DT_NEEDED`): only the
/// dynamic linker loads such an object, relocating its dependencies first. A `-static`
/// program has no dynamic section (`_DYNAMIC` is undefined, and the weak reference 0);
/// a `-static-pie` one has no `DT_NEEDED`. In asm and plain loads, like [`relocated`]:
/// nothing here may call a function.
#[inline(never)]
fn loaded_by_the_dynamic_linker() -> bool {
    const DT_NULL: usize = 0;
    const DT_NEEDED: usize = 1;
    let mut entry: *const usize;
    // SAFETY: one PC-relative address computation; the linker defines `_DYNAMIC` (hidden,
    // in every object with a dynamic section) or leaves the weak reference at 0.
    unsafe {
        core::arch::asm!(
            ".weak _DYNAMIC",
            ".hidden _DYNAMIC",
            "lea {entry}, [rip + _DYNAMIC]",
            entry = out(reg) entry,
            options(nostack, nomem, pure, preserves_flags),
        );
    }
    if entry.is_null() {
        return false;
    }
    loop {
        // SAFETY: `_DYNAMIC` is the object's dynamic section, mapped readable: (tag,
        // value) word pairs up to a DT_NULL tag, which tags are never relocated.
        match unsafe { *entry } {
            DT_NULL => return false,
            DT_NEEDED => return true,
            _ => entry = entry.wrapping_add(2),
        }
    }
}

/// Whether a resolver may call into the core now: see the module docs.
#[inline(always)]
fn may_look_further() -> bool {
    relocated() && loaded_by_the_dynamic_linker()
}

/// The wrapper `vdsotime_time` stands for when the resolver cannot look further.
extern "C" fn time_wrapper(t: *mut libc::time_t) -> libc::time_t {
    // SAFETY: the C caller's contract: `t` is NULL or writable.
    unsafe { abi::time(t) }
}

/// The wrapper `vdsotime_gettimeofday` stands for when the vDSO's is not callable as is.
extern "C" fn gettimeofday_wrapper(tv: *mut libc::timeval, tz: *mut c_void) -> c_int {
    // SAFETY: the C caller's contract: each pointer NULL or writable.
    unsafe { abi::gettimeofday(tv, tz) }
}

/// Called by the dynamic linker: the function `vdsotime_time` is. The core's entry for
/// `time` (the vDSO's `time`, its coarse clock, or the syscall) has `time`'s C signature
/// and meaning on 64-bit targets.
extern "C" fn resolve_time() -> usize {
    if !may_look_further() {
        return time_wrapper as *const () as usize;
    }
    vdsotime::raw::time_entry() as usize
}

/// Called by the dynamic linker: the vDSO's `gettimeofday` if it can be called as the C
/// function (it cannot fail but by faulting), else the wrapper that sets `errno`.
extern "C" fn resolve_gettimeofday() -> usize {
    if !may_look_further() {
        return gettimeofday_wrapper as *const () as usize;
    }
    match vdsotime::raw::gettimeofday() {
        Some(vdso) => vdso as usize,
        None => gettimeofday_wrapper as *const () as usize,
    }
}
