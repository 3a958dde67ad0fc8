//! libvdsotime: the vdsotime clock functions for C, declared in `include/vdsotime.h`.
//!
//! Each exported `vdsotime_*` function has the semantics of its libc namesake (0, or -1 with
//! `errno`), served by the vDSO when it can and by the exact system call otherwise. The
//! marshalling lives in [`abi`], which the LD_PRELOAD library compiles in as a module of its
//! own (it does not depend on this crate: see its Cargo.toml) and exports under the libc names.
//!
//! Build products: `libvdsotime_c.{so,a}` in the cargo target directory, installed as
//! `libvdsotime.{so,a}` with `vdsotime.pc` by `install.sh`.

pub mod abi;
pub mod ctypes;
mod exports;
/// Where glibc runs IFUNC resolvers and the trampoline exists: `time` and `gettimeofday`.
#[cfg(all(target_env = "gnu", target_arch = "x86_64"))]
mod ifunc;
mod load;
