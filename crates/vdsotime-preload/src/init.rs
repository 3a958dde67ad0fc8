//! The library's ELF constructor: runs once when the dynamic linker loads it, after the C
//! library and before the program's constructors and `main`.

use core::ffi::c_char;
#[cfg(test)]
use core::ffi::c_int;

extern "C" {
    static environ: *const *const c_char;
}

type Constructor = extern "C" fn();

#[used]
#[link_section = ".init_array"]
static INIT: Constructor = init;

/// Takes no arguments: glibc calls `.init_array` entries with `(argc, argv, envp)`, but
/// musl calls them with none, so the environment comes from `environ`, which both C
/// libraries set before they run constructors.
extern "C" fn init() {
    // Everything the first calls would do, now: a program that enters a seccomp sandbox
    // later (an allowlist without the vDSO check's system call) keeps its clocks.
    vdsotime::init();
    #[cfg(target_arch = "x86_64")]
    crate::trampoline::bind();
    // SAFETY: reading the C library's `environ` pointer, set before constructors run.
    let envp = unsafe { environ };
    // SAFETY: envp is NULL or the process's NULL-terminated array of C strings.
    unsafe { crate::debug::run(envp) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// musl runs `.init_array` entries as `void (*)(void)`: the argument registers then
    /// hold whatever they held before. Called so with garbage there (an `envp` of 0x10,
    /// which is never mapped), the constructor must not look at its arguments.
    #[test]
    fn the_constructor_reads_no_argument_as_musl_calls_it() {
        type WithGarbage = extern "C" fn(c_int, usize, usize);
        // SAFETY: the C calling convention lets a caller pass more arguments than the
        // callee reads (musl's call, with stale registers, is the same call); the
        // constructor may run again: it looks things up, stores the same jump targets
        // again and reads the environment.
        let call = unsafe { core::mem::transmute::<Constructor, WithGarbage>(INIT) };
        call(-1, 0x10, 0x10);
    }
}
