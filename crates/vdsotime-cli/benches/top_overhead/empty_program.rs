//! The floor of every program on the raw tracepoint `sys_enter`: a BPF program that does
//! nothing (`r0 = 0; exit`), attached there. Every system call of the host then takes the
//! kernel's slow entry path and runs a program, so this row is what any counter attached
//! there costs before it tests a single number: `top --backend tracepoint` can only be
//! judged against it. Loaded with the bpf system call itself: no clang, no loader crate.

use std::os::fd::{FromRawFd, OwnedFd};

/// `BPF_PROG_LOAD`, `BPF_RAW_TRACEPOINT_OPEN` (include/uapi/linux/bpf.h).
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_RAW_TRACEPOINT_OPEN: libc::c_long = 17;
/// `BPF_PROG_TYPE_RAW_TRACEPOINT`.
const PROG_TYPE_RAW_TRACEPOINT: u32 = 17;
/// `r0 = 0` (BPF_ALU64 | BPF_MOV | BPF_K), then `exit` (BPF_JMP | BPF_EXIT): `struct
/// bpf_insn`s whose registers, offset and immediate are all zero, so in either byte order
/// only the opcode byte is set.
const PROGRAM: [[u8; 8]; 2] = [[0xb7, 0, 0, 0, 0, 0, 0, 0], [0x95, 0, 0, 0, 0, 0, 0, 0]];
const LICENSE: &[u8] = b"GPL\0";
const TRACEPOINT: &[u8] = b"sys_enter\0";

/// The attached program: closing both descriptors (dropping this) detaches it.
#[derive(Debug)]
pub struct EmptyProgram {
    _program: OwnedFd,
    _link: OwnedFd,
}

/// The fields of `union bpf_attr` that `BPF_PROG_LOAD` reads first; the rest zero.
#[repr(C)]
struct ProgLoad {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    rest: [u64; 13],
}

/// The fields of `union bpf_attr` that `BPF_RAW_TRACEPOINT_OPEN` reads; the rest zero.
#[repr(C)]
struct RawTracepointOpen {
    name: u64,
    prog_fd: u32,
    pad: u32,
    rest: [u64; 14],
}

/// `bpf(cmd, attr)` with a union larger than the command reads: the kernel accepts it
/// when its tail is zero.
fn bpf<T>(cmd: libc::c_long, attr: &T) -> Result<OwnedFd, std::io::Error> {
    // SAFETY: `attr` is a valid, initialized `#[repr(C)]` value of the size passed; each
    // pointer in it refers to a static or to memory the caller keeps alive.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr as *const T,
            std::mem::size_of::<T>(),
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // `c_long` is `i32` itself on 32-bit targets.
    #[allow(clippy::useless_conversion)]
    let fd = i32::try_from(fd).map_err(|_| std::io::Error::from_raw_os_error(libc::EBADF))?;
    // SAFETY: the kernel returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Loads the empty program and attaches it to `sys_enter`, or says why it cannot.
pub fn attach() -> Result<EmptyProgram, String> {
    let load = ProgLoad {
        prog_type: PROG_TYPE_RAW_TRACEPOINT,
        insn_cnt: PROGRAM.len() as u32,
        insns: PROGRAM.as_ptr() as u64,
        license: LICENSE.as_ptr() as u64,
        rest: [0; 13],
    };
    let program = bpf(BPF_PROG_LOAD, &load).map_err(|e| format!("BPF_PROG_LOAD: {e}"))?;
    let open = RawTracepointOpen {
        name: TRACEPOINT.as_ptr() as u64,
        prog_fd: program_fd(&program),
        pad: 0,
        rest: [0; 14],
    };
    let link = bpf(BPF_RAW_TRACEPOINT_OPEN, &open)
        .map_err(|e| format!("BPF_RAW_TRACEPOINT_OPEN sys_enter: {e}"))?;
    Ok(EmptyProgram {
        _program: program,
        _link: link,
    })
}

fn program_fd(fd: &OwnedFd) -> u32 {
    use std::os::fd::AsRawFd;
    u32::try_from(fd.as_raw_fd()).unwrap_or(u32::MAX)
}
