//! The library's ELF constructor: runs once when the dynamic linker loads it, after the C
//! library and before the program's constructors and `main`.

use core::ffi::{c_char, c_int};

extern "C" {
    static environ: *const *const c_char;
}

type Constructor = extern "C" fn(c_int, *const *const c_char, *const *const c_char);

#[used]
#[link_section = ".init_array"]
static INIT: Constructor = init;

/// glibc calls `.init_array` entries of shared objects with `(argc, argv, envp)`.
extern "C" fn init(_argc: c_int, _argv: *const *const c_char, envp: *const *const c_char) {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    crate::trampoline::bind();
    let envp = if envp.is_null() {
        // SAFETY: reading the C library's `environ` pointer, which the dynamic linker set
        // before running constructors.
        unsafe { environ }
    } else {
        envp
    };
    // SAFETY: envp is NULL or the process's NULL-terminated array of C strings.
    unsafe { crate::debug::run(envp) };
}
