//! After `fork`, parent and child never produce the same bytes, through the per-thread
//! state and through a `State`, even when the state had buffered output left before
//! the fork (a byte was drawn, so the vDSO holds the rest of its batch): the kernel
//! wipes `MAP_DROPPABLE` memory in the child and the vDSO rekeys on the generation
//! change. Each side draws 256 blocks of 32 bytes; no block may appear on both sides.

mod getrandom_common;

use std::collections::HashSet;

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

    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: the child only draws random bytes (raw system calls and the vDSO: no
    // locks, no allocation), writes them to the pipe and leaves with `_exit`.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
    if pid == 0 {
        let blocks = draw(&mut state);
        let bytes = blocks.as_flattened();
        let mut done = 0;
        while done < bytes.len() {
            // SAFETY: writes the rest of `bytes` to the pipe.
            let n =
                unsafe { libc::write(fds[1], bytes[done..].as_ptr().cast(), bytes.len() - done) };
            if n <= 0 {
                // SAFETY: leaving the child without running the parent's destructors.
                unsafe { libc::_exit(2) };
            }
            done += n as usize;
        }
        // SAFETY: as above.
        unsafe { libc::_exit(0) };
    }
    // SAFETY: the parent does not write.
    unsafe { libc::close(fds[1]) };
    let parent = draw(&mut state);
    let mut child = vec![0u8; BLOCKS * 32];
    let mut done = 0;
    while done < child.len() {
        // SAFETY: reads into the rest of `child`.
        let n = unsafe {
            libc::read(
                fds[0],
                child[done..].as_mut_ptr().cast(),
                child.len() - done,
            )
        };
        assert!(n > 0, "the child sent {done} bytes of {}", child.len());
        done += n as usize;
    }
    let mut status = 0;
    // SAFETY: waits for our own child.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    // SAFETY: closes our end.
    unsafe { libc::close(fds[0]) };
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child status {status:#x}"
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
