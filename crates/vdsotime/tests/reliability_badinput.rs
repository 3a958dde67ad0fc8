//! Bad input: invalid and dynamic clock ids must give exactly the kernel's errno, and
//! malformed images must give `Err` (or a consistent result), never a panic or a hang.

mod reliability_common;

use std::sync::mpsc;
use std::time::Duration;

use reliability_common::consistency::{check_complete, check_parsed, symbol_keys};
use reliability_common::elf64;
use reliability_common::{bracket, libc_clock_getres, libc_clock_gettime, real_images};
use vdsotime::{ClockId, Errno, Vdso};

/// Compares the library, its syscall module and a raw libc syscall for one clock id:
/// the same errno exactly, or readings that bracket and resolutions that are equal.
fn check_id(clock: ClockId) {
    let oracle = libc_clock_gettime(clock);
    let lib = vdsotime::clock_gettime(clock);
    let sys = vdsotime::syscall::clock_gettime(clock);
    match oracle {
        Err(e) => {
            assert_eq!(
                lib.err(),
                Some(e),
                "clock_gettime({clock:?}): libc says {e}"
            );
            assert_eq!(
                sys.err(),
                Some(e),
                "syscall::clock_gettime({clock:?}): libc says {e}"
            );
        }
        Ok(_) => {
            assert!(
                lib.is_ok() && sys.is_ok(),
                "{clock:?}: libc Ok, lib {lib:?}, syscall {sys:?}"
            );
            bracket(clock).unwrap();
        }
    }
    let oracle = libc_clock_getres(clock);
    assert_eq!(
        vdsotime::clock_getres(clock),
        oracle,
        "clock_getres({clock:?})"
    );
    assert_eq!(
        vdsotime::syscall::clock_getres(clock),
        oracle,
        "syscall::clock_getres({clock:?})"
    );
}

#[test]
fn invalid_and_negative_ids_match_the_kernel() {
    let mut ids: Vec<i32> = (-64..=64).collect();
    ids.extend([
        i32::MIN,
        i32::MIN + 1,
        i32::MAX,
        i32::MAX - 1,
        1 << 16,
        -(1 << 16),
    ]);
    let mut einval = 0;
    for id in ids {
        let clock = ClockId::from_raw(id);
        if libc_clock_gettime(clock) == Err(Errno::EINVAL) {
            einval += 1;
        }
        check_id(clock);
    }
    // -1, 10 (the removed SGI cycle clock), 12.. and the extremes must all be invalid.
    for id in [-1, 10, 12, 64, i32::MIN, i32::MAX] {
        assert_eq!(
            vdsotime::clock_gettime(ClockId::from_raw(id)),
            Err(Errno::EINVAL),
            "id {id}"
        );
    }
    println!("{einval} of the ids tried were EINVAL; every one matched the kernel");
}

/// Spawns and reaps a child, returning a pid that no longer exists.
fn dead_pid() -> i32 {
    loop {
        let mut child = std::process::Command::new("true")
            .spawn()
            .expect("spawn true");
        let pid = child.id() as i32;
        child.wait().expect("reap");
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            return pid;
        }
    }
}

#[test]
fn cpu_clock_of_a_reaped_process_is_the_kernels_error() {
    let pid = dead_pid();
    for clock in [ClockId::process_cputime(pid), ClockId::thread_cputime(pid)] {
        let oracle = libc_clock_gettime(clock);
        assert!(
            oracle.is_err(),
            "pid {pid} is reaped, yet its clock reads {oracle:?}"
        );
        check_id(clock);
    }
}

#[test]
fn cpu_clock_of_a_live_process_and_of_this_thread() {
    let mut child = std::process::Command::new("sleep")
        .arg("5")
        .spawn()
        .expect("spawn sleep");
    let pid = child.id() as i32;
    check_id(ClockId::process_cputime(pid));
    check_id(ClockId::thread_cputime(pid));
    let _ = child.kill();
    let _ = child.wait();
    // SAFETY: gettid has no arguments and cannot fail.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) } as i32;
    check_id(ClockId::thread_cputime(tid));
    check_id(ClockId::process_cputime(std::process::id() as i32));
}

#[test]
fn fd_clocks_closed_non_clock_and_ptp() {
    use std::os::fd::{AsRawFd, IntoRawFd};
    let file = std::fs::File::open("/dev/null").expect("open /dev/null");
    // An open fd that is not a clock.
    check_id(ClockId::from_fd(file.as_raw_fd()));
    let fd = file.into_raw_fd();
    // SAFETY: fd came from into_raw_fd above and is closed exactly once.
    assert_eq!(unsafe { libc::close(fd) }, 0);
    let closed = ClockId::from_fd(fd);
    assert!(
        libc_clock_gettime(closed).is_err(),
        "closed fd {fd} reads as a clock"
    );
    check_id(closed);
    // A real dynamic clock, where the machine has one.
    if let Ok(ptp) = std::fs::File::open("/dev/ptp0") {
        check_id(ClockId::from_fd(ptp.as_raw_fd()));
    } else {
        println!("no /dev/ptp0: the PTP fd clock case was not tried");
    }
}

/// Runs `f` on a thread and fails if it takes longer than 20 s (a lookup loop, most likely).
fn no_hang<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(Duration::from_secs(20)) {
        Ok(Ok(v)) => v,
        Ok(Err(p)) => std::panic::resume_unwind(p),
        Err(_) => panic!("{what}: no answer after 20 s (endless loop?)"),
    }
}

/// Parses `img`: an accepted image must pass the consistency checks. Returns whether accepted.
fn parse_checked(label: &str, img: &[u8]) -> bool {
    match Vdso::parse(img) {
        Ok(v) => {
            if let Err(e) = check_parsed(img, &v) {
                panic!("{label}: {e}");
            }
            true
        }
        Err(e) => {
            assert!(!e.to_string().is_empty(), "{label}: empty error text");
            false
        }
    }
}

#[test]
fn real_images_pass_the_complete_check() {
    let images = real_images();
    assert!(
        !images.is_empty() || reliability_common::expect_no_vdso(),
        "no vDSO and no fixtures: nothing to test"
    );
    for (label, img) in &images {
        let v = Vdso::parse(img).unwrap_or_else(|e| panic!("{label}: {e}"));
        let keys = check_complete(img, &v).unwrap_or_else(|e| panic!("{label}: {e}"));
        println!("{label}: {} bytes, {} symbols", img.len(), keys.len());
    }
}

#[test]
fn every_truncation_of_the_real_images() {
    for (label, img) in real_images() {
        let full = Vdso::parse(&img).expect("full image parses");
        let all = symbol_keys(&full, 10_000);
        let mut accepted = 0;
        for n in 0..img.len() {
            let cut = img[..n].to_vec();
            let label = format!("{label} cut to {n}");
            match Vdso::parse(&cut) {
                Ok(v) => {
                    accepted += 1;
                    let keys = check_parsed(&cut, &v).unwrap_or_else(|e| panic!("{label}: {e}"));
                    for k in &keys {
                        assert!(
                            all.contains(k),
                            "{label}: symbol {k:?} not in the full image"
                        );
                    }
                    if elf64::is_elf64_le(&img) {
                        assert!(
                            n >= elf64::phdr_end(&img),
                            "{label}: accepted without phdrs"
                        );
                    }
                    assert!(n >= 52, "{label}: accepted a cut ELF header");
                }
                Err(_) => continue,
            }
        }
        println!("{label}: {accepted} of {} truncations accepted", img.len());
    }
}

#[test]
fn random_garbage_is_rejected() {
    // xorshift64*: deterministic, so a failure reproduces.
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let mut accepted = 0;
    for round in 0..3000 {
        let len = (next() % 4096) as usize;
        let mut buf: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        let with_header = round % 2 == 1 && len >= 7;
        if with_header {
            // A plausible e_ident so the parser goes past the magic check.
            buf[..7].copy_from_slice(&[0x7f, b'E', b'L', b'F', 1 + (round % 4 / 2) as u8, 1, 1]);
        }
        let label = format!("garbage round {round} ({len} bytes)");
        if parse_checked(&label, &buf) {
            accepted += 1;
            assert!(with_header, "{label}: accepted without the ELF magic");
        }
    }
    println!("{accepted} of 3000 garbage buffers accepted (all consistent)");
}

/// Every ELF64 little-endian image (own vDSO, x86_64/aarch64/riscv64/ppc64le fixtures),
/// for the targeted corruptions below.
fn elf64_images() -> Vec<(String, Vec<u8>)> {
    let images: Vec<_> = real_images()
        .into_iter()
        .filter(|(_, b)| elf64::is_elf64_le(b))
        .collect();
    if images.is_empty() {
        println!("no ELF64 little-endian image available: nothing to corrupt");
    }
    images
}

#[test]
fn header_fields_pointing_outside() {
    for (label, img) in elf64_images() {
        header_fields_of(&label, &img);
    }
}

fn header_fields_of(label: &str, img: &[u8]) {
    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
    let mut set = |name, off: usize, bytes: &[u8]| {
        let mut b = img.to_vec();
        b[off..off + bytes.len()].copy_from_slice(bytes);
        cases.push((name, b));
    };
    set("e_phoff = u64::MAX", 0x20, &u64::MAX.to_le_bytes());
    set(
        "e_phoff = u64::MAX - 7",
        0x20,
        &(u64::MAX - 7).to_le_bytes(),
    );
    set("e_phoff = len", 0x20, &(img.len() as u64).to_le_bytes());
    set("e_phnum = 0xffff", 0x38, &0xffffu16.to_le_bytes());
    set("e_phnum = 0", 0x38, &0u16.to_le_bytes());
    set("e_phentsize = 0", 0x36, &0u16.to_le_bytes());
    set("e_phentsize = 1", 0x36, &1u16.to_le_bytes());
    set("e_phentsize = 0xffff", 0x36, &0xffffu16.to_le_bytes());
    set("EI_CLASS = 3", 4, &[3]);
    set("EI_DATA = 0", 5, &[0]);
    let dyn_ph = elf64::phdrs(img)
        .iter()
        .position(|p| p.0 == 2)
        .expect("PT_DYNAMIC");
    let ph = elf64::u64_at(img, 0x20) as usize + dyn_ph * 56;
    set(
        "PT_DYNAMIC offset = u64::MAX",
        ph + 8,
        &u64::MAX.to_le_bytes(),
    );
    set(
        "PT_DYNAMIC vaddr = u64::MAX",
        ph + 16,
        &u64::MAX.to_le_bytes(),
    );
    set(
        "PT_DYNAMIC filesz = u64::MAX",
        ph + 32,
        &u64::MAX.to_le_bytes(),
    );
    set(
        "PT_DYNAMIC filesz = len",
        ph + 32,
        &(img.len() as u64).to_le_bytes(),
    );
    for (e, _, _) in elf64::dyn_entries(img) {
        let mut b = img.to_vec();
        elf64::put_u64(&mut b, e + 8, u64::MAX - 3);
        cases.push(("a dynamic entry's value = u64::MAX - 3", b.clone()));
        elf64::put_u64(&mut b, e + 8, img.len() as u64);
        cases.push(("a dynamic entry's value = image length", b));
    }
    for (name, b) in cases {
        let what = format!("{label}: {name}");
        no_hang(&what.clone(), move || {
            parse_checked(&what, &b);
        });
    }
}

#[test]
fn corrupt_hash_tables_do_not_loop() {
    for (label, img) in elf64_images() {
        corrupt_hash_tables_of(&label, &img);
    }
}

fn corrupt_hash_tables_of(label: &str, img: &[u8]) {
    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
    if let Some((_, h)) = elf64::find_dyn(img, elf64::DT_HASH) {
        let nbucket = elf64::u32_at(img, h) as usize;
        let nchain = elf64::u32_at(img, h + 4) as usize;
        // Every chain entry points to itself, every bucket to symbol 1: a cycle.
        let mut cyc = img.to_vec();
        elf64::hide_dyn(&mut cyc, elf64::DT_GNU_HASH);
        for i in 0..nbucket {
            elf64::put_u32(&mut cyc, h + 8 + 4 * i, 1);
        }
        for i in 0..nchain {
            elf64::put_u32(&mut cyc, h + 8 + 4 * nbucket + 4 * i, i as u32);
        }
        cases.push(("SysV chains that point to themselves", cyc.clone()));
        let mut two = cyc;
        for i in 0..nchain {
            elf64::put_u32(&mut two, h + 8 + 4 * nbucket + 4 * i, (i as u32) ^ 1);
        }
        cases.push(("SysV chains in 2-cycles", two));
        let mut huge = img.to_vec();
        elf64::hide_dyn(&mut huge, elf64::DT_GNU_HASH);
        elf64::put_u32(&mut huge, h + 4, u32::MAX);
        cases.push(("SysV nchain = u32::MAX", huge.clone()));
        elf64::put_u32(&mut huge, h, u32::MAX);
        cases.push(("SysV nbucket = nchain = u32::MAX", huge));
    }
    if let Some((_, g)) = elf64::find_dyn(img, elf64::DT_GNU_HASH) {
        let nbuckets = elf64::u32_at(img, g) as usize;
        let bloom = elf64::u32_at(img, g + 8) as usize;
        let chains = g + 16 + 8 * bloom + 4 * nbuckets;
        let mut open = img.to_vec();
        elf64::hide_dyn(&mut open, elf64::DT_HASH);
        // All bloom bits set and no end-of-chain marker: a lookup walks off the table.
        for i in 0..bloom {
            elf64::put_u64(&mut open, g + 16 + 8 * i, u64::MAX);
        }
        let mut at = chains;
        while at + 4 <= open.len() {
            let v = elf64::u32_at(&open, at);
            elf64::put_u32(&mut open, at, v & !1);
            at += 4;
        }
        cases.push(("GNU hash chains without an end marker", open.clone()));
        elf64::put_u32(&mut open, g, u32::MAX);
        cases.push(("GNU nbuckets = u32::MAX", open.clone()));
        elf64::put_u32(&mut open, g + 8, u32::MAX);
        cases.push(("GNU bloom size = u32::MAX", open));
    }
    assert!(
        !cases.is_empty(),
        "{label}: the image has neither hash table"
    );
    for (name, b) in cases {
        let what = format!("{label}: {name}");
        no_hang(&what.clone(), move || {
            if let Ok(v) = Vdso::parse(&b) {
                let _ = v.lookup("__vdso_no_such_symbol", None);
                let _ = v.lookup("__vdso_clock_gettime", Some("LINUX_2.6"));
                check_parsed(&b, &v).unwrap_or_else(|e| panic!("{what}: {e}"));
            }
        });
    }
}

#[test]
fn one_hash_table_is_enough() {
    let mut tried = 0;
    for (label, img) in elf64_images() {
        tried += one_hash_table_of(&label, &img);
    }
    println!("{tried} single-hash-table variants parsed completely");
}

/// Hides each hash table in turn (where the other exists): the same symbols must remain.
fn one_hash_table_of(label: &str, img: &[u8]) -> usize {
    let full = Vdso::parse(img).unwrap_or_else(|e| panic!("{label}: {e}"));
    let all = check_complete(img, &full).unwrap_or_else(|e| panic!("{label}: {e}"));
    let mut tried = 0;
    for (hidden, kept) in [(elf64::DT_HASH, "GNU"), (elf64::DT_GNU_HASH, "SysV")] {
        let other = if hidden == elf64::DT_HASH {
            elf64::DT_GNU_HASH
        } else {
            elf64::DT_HASH
        };
        let mut b = img.to_vec();
        if elf64::find_dyn(img, other).is_none() || !elf64::hide_dyn(&mut b, hidden) {
            continue;
        }
        let v = Vdso::parse(&b).unwrap_or_else(|e| panic!("{label}, only {kept} hash: {e}"));
        let keys = check_complete(&b, &v).unwrap_or_else(|e| panic!("{label}, only {kept}: {e}"));
        assert_eq!(
            keys, all,
            "{label}: other symbols with only the {kept} hash table"
        );
        tried += 1;
    }
    tried
}
