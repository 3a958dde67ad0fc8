//! Gives libvdsotime_preload.so its own SONAME, its file name: a preload library is
//! loaded by path and never linked with `-l`, so no program records it as NEEDED, and a
//! version suffix (`.so.0`) would promise an ABI for linking that it does not offer; its
//! file name makes `ldconfig` leave it alone rather than link another library's name to it.
//!
//! `-z nodelete`, as libvdsotime's: a thread's first `getrandom` installs a thread-exit
//! destructor whose code is in this library, so a `dlclose` must leave it mapped.

fn main() {
    println!("cargo:rustc-link-arg-cdylib=-Wl,-soname,libvdsotime_preload.so");
    println!("cargo:rustc-link-arg-cdylib=-Wl,-z,nodelete");
    println!("cargo:rerun-if-changed=build.rs");
}
