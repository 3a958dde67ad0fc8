/work/main/crates/vdsotime/target/debug/libvdsotime.rlib: /work/main/crates/vdsotime/src/lib.rs
