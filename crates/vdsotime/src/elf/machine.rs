//! `e_machine` values (the ELF gABI's `EM_*`) of the architectures whose vDSO vdsotime
//! reads, and the one this crate was compiled for: the reader of the process's own image
//! checks it, and the per-architecture tables ([`crate::arch`]) are keyed by it.

/// `EM_386`: i386.
pub const EM_386: u16 = 3;
/// `EM_MIPS`: MIPS, every ABI.
pub const EM_MIPS: u16 = 8;
/// `EM_PPC`: 32-bit powerpc.
pub const EM_PPC: u16 = 20;
/// `EM_PPC64`: 64-bit powerpc, either byte order.
pub const EM_PPC64: u16 = 21;
/// `EM_S390`: s390 and s390x.
pub const EM_S390: u16 = 22;
/// `EM_ARM`: 32-bit arm.
pub const EM_ARM: u16 = 40;
/// `EM_X86_64`: x86-64.
pub const EM_X86_64: u16 = 62;
/// `EM_AARCH64`: arm64.
pub const EM_AARCH64: u16 = 183;
/// `EM_RISCV`: RISC-V, either word size.
pub const EM_RISCV: u16 = 243;
/// `EM_LOONGARCH`: LoongArch.
pub const EM_LOONGARCH: u16 = 258;

/// The `e_machine` of this process's own code, and so of its vDSO.
#[cfg(target_arch = "x86_64")]
pub const NATIVE_MACHINE: u16 = EM_X86_64;
#[cfg(target_arch = "x86")]
pub const NATIVE_MACHINE: u16 = EM_386;
#[cfg(target_arch = "aarch64")]
pub const NATIVE_MACHINE: u16 = EM_AARCH64;
#[cfg(target_arch = "arm")]
pub const NATIVE_MACHINE: u16 = EM_ARM;
#[cfg(target_arch = "riscv64")]
pub const NATIVE_MACHINE: u16 = EM_RISCV;
#[cfg(target_arch = "powerpc64")]
pub const NATIVE_MACHINE: u16 = EM_PPC64;
#[cfg(target_arch = "powerpc")]
pub const NATIVE_MACHINE: u16 = EM_PPC;
#[cfg(target_arch = "s390x")]
pub const NATIVE_MACHINE: u16 = EM_S390;
#[cfg(target_arch = "loongarch64")]
pub const NATIVE_MACHINE: u16 = EM_LOONGARCH;
#[cfg(any(target_arch = "mips64", target_arch = "mips"))]
pub const NATIVE_MACHINE: u16 = EM_MIPS;
