//! Gives the shared library its C name as SONAME, so that programs linked with `-lvdsotime`
//! against the installed `libvdsotime.so` record `NEEDED libvdsotime.so.0`. Cargo passes
//! these arguments on to every cdylib that depends on this package, last: none may.
//!
//! `-z nodelete`: a thread's first `vdsotime_getrandom` installs a thread-exit destructor
//! (a pthread key's, which returns the thread's vDSO state) whose code is in this library.
//! `dlclose` must then leave the library mapped, or a thread that exits afterwards jumps
//! into unmapped memory. The library stays loaded for the life of the process.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libvdsotime.so.0");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
    println!("cargo:rerun-if-changed=build.rs");
}
