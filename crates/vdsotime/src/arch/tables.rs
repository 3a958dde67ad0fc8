//! The tables, one per architecture, from the kernel's vDSO linker scripts
//! (`arch/*/kernel/vdso*/vdso*.lds.S`).

use super::ArchTable;
use crate::elf::machine::*;
use crate::elf::ElfClass::{Elf32, Elf64};

const NONE: ArchTable = ArchTable {
    name: "",
    machine: 0,
    class: Elf64,
    version: "",
    clock_gettime: None,
    clock_gettime64: None,
    clock_getres: None,
    clock_getres64: None,
    gettimeofday: None,
    time: None,
    getcpu: None,
    getrandom: None,
    time64_needs_time32: false,
    needs_call_shim: false,
    enosys_means_unserved: false,
};

/// x86-64: the whole set, including `time`, `getcpu` and (6.11+) `getrandom`.
pub static X86_64: ArchTable = ArchTable {
    name: "x86_64",
    machine: EM_X86_64,
    version: "LINUX_2.6",
    clock_gettime: Some("__vdso_clock_gettime"),
    clock_getres: Some("__vdso_clock_getres"),
    gettimeofday: Some("__vdso_gettimeofday"),
    time: Some("__vdso_time"),
    getcpu: Some("__vdso_getcpu"),
    getrandom: Some("__vdso_getrandom"),
    ..NONE
};

/// i386, and 32-bit processes on x86-64 kernels.
pub static I686: ArchTable = ArchTable {
    name: "i686",
    machine: EM_386,
    class: Elf32,
    clock_gettime64: Some("__vdso_clock_gettime64"),
    clock_getres64: Some("__vdso_clock_getres_time64"),
    getrandom: None,
    ..X86_64
};

/// arm64: no `time`, no `getcpu`; GNU hash only from Linux 6.11; `getrandom` from 6.12.
pub static AARCH64: ArchTable = ArchTable {
    name: "aarch64",
    machine: EM_AARCH64,
    version: "LINUX_2.6.39",
    clock_gettime: Some("__kernel_clock_gettime"),
    clock_getres: Some("__kernel_clock_getres"),
    gettimeofday: Some("__kernel_gettimeofday"),
    getrandom: Some("__kernel_getrandom"),
    ..NONE
};

/// 32-bit arm, and arm64 kernels' compat vDSO.
pub static ARM: ArchTable = ArchTable {
    name: "arm",
    machine: EM_ARM,
    class: Elf32,
    version: "LINUX_2.6",
    clock_gettime: Some("__vdso_clock_gettime"),
    clock_gettime64: Some("__vdso_clock_gettime64"),
    clock_getres: Some("__vdso_clock_getres"),
    clock_getres64: Some("__vdso_clock_getres_time64"),
    gettimeofday: Some("__vdso_gettimeofday"),
    time64_needs_time32: true,
    ..NONE
};

/// RISC-V 64: `getrandom` from Linux 6.16.
pub static RISCV64: ArchTable = ArchTable {
    name: "riscv64",
    machine: EM_RISCV,
    version: "LINUX_4.15",
    clock_gettime: Some("__vdso_clock_gettime"),
    clock_getres: Some("__vdso_clock_getres"),
    gettimeofday: Some("__vdso_gettimeofday"),
    getcpu: Some("__vdso_getcpu"),
    getrandom: Some("__vdso_getrandom"),
    ..NONE
};

/// 64-bit powerpc, either byte order; `getrandom` from Linux 6.12.
pub static POWERPC64: ArchTable = ArchTable {
    name: "powerpc64",
    machine: EM_PPC64,
    version: "LINUX_2.6.15",
    clock_gettime: Some("__kernel_clock_gettime"),
    clock_getres: Some("__kernel_clock_getres"),
    gettimeofday: Some("__kernel_gettimeofday"),
    time: Some("__kernel_time"),
    getcpu: Some("__kernel_getcpu"),
    getrandom: Some("__kernel_getrandom"),
    needs_call_shim: true,
    ..NONE
};

/// 32-bit powerpc (whose vDSO has `getrandom` too; vdsotime makes the system call on
/// every 32-bit target).
pub static POWERPC: ArchTable = ArchTable {
    name: "powerpc",
    machine: EM_PPC,
    class: Elf32,
    clock_gettime64: Some("__kernel_clock_gettime64"),
    clock_getres64: Some("__kernel_clock_getres_time64"),
    getrandom: None,
    ..POWERPC64
};

/// s390x: `DT_HASH` with 64-bit words; `getrandom` from Linux 6.12.
pub static S390X: ArchTable = ArchTable {
    name: "s390x",
    machine: EM_S390,
    version: "LINUX_2.6.29",
    clock_gettime: Some("__kernel_clock_gettime"),
    clock_getres: Some("__kernel_clock_getres"),
    gettimeofday: Some("__kernel_gettimeofday"),
    getcpu: Some("__kernel_getcpu"),
    getrandom: Some("__kernel_getrandom"),
    ..NONE
};

/// LoongArch 64: `getrandom` from Linux 6.12.
pub static LOONGARCH64: ArchTable = ArchTable {
    name: "loongarch64",
    machine: EM_LOONGARCH,
    version: "LINUX_5.10",
    clock_gettime: Some("__vdso_clock_gettime"),
    clock_getres: Some("__vdso_clock_getres"),
    gettimeofday: Some("__vdso_gettimeofday"),
    getcpu: Some("__vdso_getcpu"),
    getrandom: Some("__vdso_getrandom"),
    ..NONE
};

/// MIPS n64.
pub static MIPS64: ArchTable = ArchTable {
    name: "mips64",
    machine: EM_MIPS,
    version: "LINUX_2.6",
    clock_gettime: Some("__vdso_clock_gettime"),
    clock_getres: Some("__vdso_clock_getres"),
    gettimeofday: Some("__vdso_gettimeofday"),
    enosys_means_unserved: true,
    ..NONE
};

/// MIPS o32 (and n32): also the time64 `clock_gettime`.
pub static MIPS: ArchTable = ArchTable {
    name: "mips",
    class: Elf32,
    clock_gettime64: Some("__vdso_clock_gettime64"),
    clock_getres64: Some("__vdso_clock_getres_time64"),
    ..MIPS64
};

/// Every table.
pub static ALL: &[&ArchTable] = &[
    &X86_64,
    &I686,
    &AARCH64,
    &ARM,
    &RISCV64,
    &POWERPC64,
    &POWERPC,
    &S390X,
    &LOONGARCH64,
    &MIPS64,
    &MIPS,
];

/// The table of the architecture this crate was compiled for.
#[cfg(target_arch = "x86_64")]
pub static NATIVE: &ArchTable = &X86_64;
#[cfg(target_arch = "x86")]
pub static NATIVE: &ArchTable = &I686;
#[cfg(target_arch = "aarch64")]
pub static NATIVE: &ArchTable = &AARCH64;
#[cfg(target_arch = "arm")]
pub static NATIVE: &ArchTable = &ARM;
#[cfg(target_arch = "riscv64")]
pub static NATIVE: &ArchTable = &RISCV64;
#[cfg(target_arch = "powerpc64")]
pub static NATIVE: &ArchTable = &POWERPC64;
#[cfg(target_arch = "powerpc")]
pub static NATIVE: &ArchTable = &POWERPC;
#[cfg(target_arch = "s390x")]
pub static NATIVE: &ArchTable = &S390X;
#[cfg(target_arch = "loongarch64")]
pub static NATIVE: &ArchTable = &LOONGARCH64;
#[cfg(target_arch = "mips64")]
pub static NATIVE: &ArchTable = &MIPS64;
#[cfg(target_arch = "mips")]
pub static NATIVE: &ArchTable = &MIPS;
