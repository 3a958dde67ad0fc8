//! `getrandom::fill` N times through getrandom 0.3 and N times through getrandom 0.4, both
//! in one program, between two marker system calls, for tests/backend.rs to count the
//! getrandom system calls with strace: built without the cfg, getrandom's own backends
//! (one system call per call); with `--cfg getrandom_backend="custom"`, vdsotime's for
//! both versions (none once the thread has its vDSO state, which it takes after its first
//! `SYSCALL_DRAWS` draws: the warm-up).
//!
//! `getrandom_probe N`

vdsotime_getrandom::custom_backend!();

/// Marks a section boundary in the strace log (a path no program looks for).
fn marker() {
    let path = c"/vdsotime-getrandom-strace-marker";
    // SAFETY: faccessat only reads the NUL-terminated path.
    unsafe {
        libc::syscall(
            libc::SYS_faccessat,
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::F_OK,
        )
    };
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    let mut buf = [0u8; 16];
    for _ in 0..=vdsotime::random::SYSCALL_DRAWS {
        getrandom::fill(&mut buf).expect("warm-up");
    }
    // getrandom 0.4's own backend probes the system call once, on its first call.
    getrandom04::fill(&mut buf).expect("warm-up");
    marker();
    let mut last = buf;
    for _ in 0..n {
        getrandom::fill(&mut buf).expect("getrandom 0.3 fill");
        assert_ne!(buf, last, "the same 16 bytes twice");
        last = buf;
        getrandom04::fill(&mut buf).expect("getrandom 0.4 fill");
        assert_ne!(buf, last, "the same 16 bytes twice");
        last = buf;
    }
    marker();
    let backend = if vdsotime_getrandom::CUSTOM_BACKEND {
        "vdsotime"
    } else {
        "getrandom's default"
    };
    println!("backend: {backend}; {n} calls through getrandom 0.3 and {n} through 0.4");
}
