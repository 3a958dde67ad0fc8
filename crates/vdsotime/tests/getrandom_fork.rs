//! After `fork`, parent and child never produce the same bytes, through the per-thread
//! state and through a `State`, even when the state had buffered output left before
//! the fork (a byte was drawn, so the vDSO holds the rest of its batch): the kernel
//! wipes `MAP_DROPPABLE` memory in the child and the vDSO rekeys on the generation
//! change. Each side draws 256 blocks of 32 bytes; no block may appear on both sides.

mod getrandom_common;

use std::collections::HashSet;
use std::os::fd::AsRawFd;
use std::time::Duration;

use getrandom_common::process;

use vdsotime::random::State;
use vdsotime::GrndFlags;

const BLOCKS: usize = 256;

/// Draws the blocks: per-thread state and `State`, alternately.
fn draw(state: &mut State) -> Vec<[u8; 32]> {
    let mut out = vec![[0u8; 32]; BLOCKS];
    for (i, block) in out.iter_mut().enumerate() {
        let r = if i % 2 == 0 {
            vdsotime::random::fill(block, GrndFlags::NONE)
        } else {
            state.fill(block, GrndFlags::NONE)
        };
        if r.is_err() {
            block.fill(0);
        }
    }
    out
}

#[test]
fn a_forked_child_never_repeats_its_parents_bytes() {
    let mut state = State::new();
    let mut one = [0u8; 1];
    // A byte from each, so both have most of a batch buffered when the fork comes.
    vdsotime::getrandom(&mut one, GrndFlags::NONE).unwrap();
    state.getrandom(&mut one, GrndFlags::NONE).unwrap();

    // The child's blocks go to a file: a pipe would leave the parent waiting on a read
    // if the child hung, where the file lets it time the child out.
    let file = process::scratch_file().expect("temporary file");
    let fd = file.as_raw_fd();
    // SAFETY: the child only draws random bytes (raw system calls and the vDSO: no
    // locks, no allocation), writes them to the file and leaves with `_exit`.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
    if pid == 0 {
        let blocks = draw(&mut state);
        let bytes = blocks.as_flattened();
        let mut done = 0;
        while done < bytes.len() {
            // SAFETY: writes the rest of `bytes` to the file.
            let n = unsafe { libc::write(fd, bytes[done..].as_ptr().cast(), bytes.len() - done) };
            if n <= 0 {
                // SAFETY: leaving the child without running the parent's destructors.
                unsafe { libc::_exit(2) };
            }
            done += n as usize;
        }
        // SAFETY: as above.
        unsafe { libc::_exit(0) };
    }
    let parent = draw(&mut state);
    let status =
        process::wait_or_kill(pid, pid, Duration::from_secs(60)).unwrap_or_else(|threads| {
            panic!(
                "the child hung: killed; its threads:\n{}",
                threads.join("\n")
            )
        });
    assert!(status.success(), "child: {status}");
    let child = process::contents(&file);
    assert_eq!(
        child.len(),
        BLOCKS * 32,
        "the child wrote {} bytes",
        child.len()
    );

    let child: Vec<[u8; 32]> = child
        .chunks_exact(32)
        .map(|c| c.try_into().unwrap())
        .collect();
    assert!(
        !parent.contains(&[0; 32]) && !child.contains(&[0; 32]),
        "a draw failed"
    );
    let parents: HashSet<&[u8; 32]> = parent.iter().collect();
    let shared = child.iter().filter(|b| parents.contains(b)).count();
    assert_eq!(
        shared, 0,
        "{shared} blocks of 32 bytes came out of both parent and child"
    );
    assert_eq!(parents.len(), BLOCKS, "the parent repeated itself");
    println!(
        "parent and child: {BLOCKS} blocks each, none shared (per-thread state and State, vDSO: {})",
        state.is_vdso()
    );
}
