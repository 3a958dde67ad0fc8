//! `getrandom::fill` served by the vDSO through vdsotime.
//!
//! Build it with getrandom's cfg for this command only:
//!
//! ```sh
//! RUSTFLAGS='--cfg getrandom_backend="custom"' cargo run --release
//! ```
//!
//! Without the cfg the macro below expands to nothing and getrandom keeps its own backend
//! (one system call per request). The cfg reaches every crate of the build, so set it only
//! for builds whose every binary invokes the macro: a project-wide `.cargo/config.toml`
//! also applies to `cargo test`, and a test binary that does not contain the macro fails to
//! link with `undefined symbol: __getrandom_v03_custom`.

vdsotime_getrandom::custom_backend!();

fn main() -> Result<(), getrandom::Error> {
    let mut key = [0u8; 32];
    // A thread's first draws are system calls (a program that draws once pays no more);
    // the draw after them takes one of vdsotime's states.
    for _ in 0..=vdsotime::random::SYSCALL_DRAWS {
        getrandom::fill(&mut key)?;
    }
    let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
    println!("key {hex}");
    let backend = if vdsotime_getrandom::CUSTOM_BACKEND {
        "vdsotime"
    } else {
        "getrandom's own"
    };
    println!("backend {backend}");
    // With the vDSO's getrandom, this thread now holds one of vdsotime's states (the
    // custom backend's draws count as the thread's own).
    let stats = vdsotime::random::pool_stats();
    println!("vdsotime states in use {}", stats.in_use);
    println!(
        "getrandom -> {}",
        vdsotime::path(vdsotime::Function::Getrandom)
    );
    Ok(())
}
