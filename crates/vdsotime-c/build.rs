//! Gives the shared library its C name as SONAME, so that programs linked with `-lvdsotime`
//! against the installed `libvdsotime.so` record `NEEDED libvdsotime.so.0`. Cargo passes
//! this argument on to every cdylib that depends on this package, last: none may.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libvdsotime.so.0");
    println!("cargo:rerun-if-changed=build.rs");
}
