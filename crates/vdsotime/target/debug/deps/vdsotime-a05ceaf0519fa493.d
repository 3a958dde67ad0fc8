/work/main/crates/vdsotime/target/debug/deps/vdsotime-a05ceaf0519fa493.d: src/lib.rs

/work/main/crates/vdsotime/target/debug/deps/libvdsotime-a05ceaf0519fa493.rlib: src/lib.rs

/work/main/crates/vdsotime/target/debug/deps/libvdsotime-a05ceaf0519fa493.rmeta: src/lib.rs

src/lib.rs:
