//! Declares the getrandom crate's `getrandom_backend` cfg, which users set with RUSTFLAGS,
//! so that `custom_backend!` in this crate's own example compiles without
//! `unexpected_cfgs` warnings.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(getrandom_backend, values(\"custom\"))");
    println!("cargo::rerun-if-changed=build.rs");
}
