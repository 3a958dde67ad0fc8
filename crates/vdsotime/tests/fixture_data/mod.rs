//! The fixture images and what each must contain: QEMU user mode's vDSOs
//! (`tests/fixtures/<arch>.so`, dumped by `cargo xtask cross --dump`) and real Debian kernels'
//! (`tests/fixtures/kernels/<arch>-linux-<release>.so`, dumped inside qemu-system machines by
//! `cargo xtask kernels --dump`).

use vdsotime::{arch, ArchTable, ElfClass, Endian};

/// One dumped image and what it must contain.
pub struct Fixture {
    pub file: &'static str,
    pub machine: u16,
    pub class: ElfClass,
    pub endian: Endian,
    pub table: &'static ArchTable,
    /// Which hash tables the image has: (DT_GNU_HASH, DT_HASH).
    pub hashes: (bool, bool),
    /// Every exported function symbol, with its version.
    pub symbols: &'static [(&'static str, &'static str)],
}

/// QEMU user mode's images (`cargo xtask cross --dump`).
pub const QEMU_USER: &[Fixture] = &[
    Fixture {
        file: "x86_64.so",
        machine: 62,
        class: ElfClass::Elf64,
        endian: Endian::Little,
        table: &arch::X86_64,
        hashes: (true, true),
        symbols: &[
            ("__vdso_clock_gettime", "LINUX_2.6"),
            ("__vdso_clock_getres", "LINUX_2.6"),
            ("__vdso_gettimeofday", "LINUX_2.6"),
            ("__vdso_time", "LINUX_2.6"),
            ("__vdso_getcpu", "LINUX_2.6"),
            ("__vdso_getrandom", "LINUX_2.6"),
            ("clock_gettime", "LINUX_2.6"),
            ("clock_getres", "LINUX_2.6"),
            ("gettimeofday", "LINUX_2.6"),
            ("time", "LINUX_2.6"),
            ("getcpu", "LINUX_2.6"),
            ("getrandom", "LINUX_2.6"),
        ],
    },
    Fixture {
        file: "i686.so",
        machine: 3,
        class: ElfClass::Elf32,
        endian: Endian::Little,
        table: &arch::I686,
        hashes: (true, true),
        symbols: &[
            ("__vdso_clock_gettime", "LINUX_2.6"),
            ("__vdso_clock_gettime64", "LINUX_2.6"),
            ("__vdso_clock_getres", "LINUX_2.6"),
            ("__vdso_gettimeofday", "LINUX_2.6"),
            ("__vdso_time", "LINUX_2.6"),
            ("__vdso_getcpu", "LINUX_2.6"),
            ("__kernel_vsyscall", "LINUX_2.5"),
            ("__kernel_sigreturn", "LINUX_2.5"),
            ("__kernel_rt_sigreturn", "LINUX_2.5"),
        ],
    },
    Fixture {
        file: "aarch64.so",
        machine: 183,
        class: ElfClass::Elf64,
        endian: Endian::Little,
        table: &arch::AARCH64,
        hashes: (true, true),
        symbols: &[
            ("__kernel_clock_gettime", "LINUX_2.6.39"),
            ("__kernel_clock_getres", "LINUX_2.6.39"),
            ("__kernel_gettimeofday", "LINUX_2.6.39"),
            ("__kernel_rt_sigreturn", "LINUX_2.6.39"),
        ],
    },
    Fixture {
        file: "arm.so",
        machine: 40,
        class: ElfClass::Elf32,
        endian: Endian::Little,
        table: &arch::ARM,
        hashes: (true, true),
        symbols: &[
            ("__vdso_clock_gettime", "LINUX_2.6"),
            ("__vdso_clock_gettime64", "LINUX_2.6"),
            ("__vdso_clock_getres", "LINUX_2.6"),
            ("__vdso_gettimeofday", "LINUX_2.6"),
        ],
    },
    Fixture {
        file: "riscv64.so",
        machine: 243,
        class: ElfClass::Elf64,
        endian: Endian::Little,
        table: &arch::RISCV64,
        hashes: (true, true),
        symbols: &[
            ("__vdso_clock_gettime", "LINUX_4.15"),
            ("__vdso_clock_getres", "LINUX_4.15"),
            ("__vdso_gettimeofday", "LINUX_4.15"),
            ("__vdso_getcpu", "LINUX_4.15"),
            ("__vdso_flush_icache", "LINUX_4.15"),
            ("__vdso_rt_sigreturn", "LINUX_4.15"),
        ],
    },
    Fixture {
        file: "s390x.so",
        machine: 22,
        class: ElfClass::Elf64,
        endian: Endian::Big,
        table: &arch::S390X,
        hashes: (true, true),
        symbols: &[
            ("__kernel_clock_gettime", "LINUX_2.6.29"),
            ("__kernel_clock_getres", "LINUX_2.6.29"),
            ("__kernel_gettimeofday", "LINUX_2.6.29"),
            ("__kernel_getcpu", "LINUX_2.6.29"),
            ("__kernel_sigreturn", "LINUX_2.6.29"),
            ("__kernel_rt_sigreturn", "LINUX_2.6.29"),
        ],
    },
    Fixture {
        file: "powerpc64le.so",
        machine: 21,
        class: ElfClass::Elf64,
        endian: Endian::Little,
        table: &arch::POWERPC64,
        hashes: (true, true),
        symbols: &[
            ("__kernel_clock_gettime", "LINUX_2.6.15"),
            ("__kernel_clock_getres", "LINUX_2.6.15"),
            ("__kernel_gettimeofday", "LINUX_2.6.15"),
            ("__kernel_time", "LINUX_2.6.15"),
            ("__kernel_getcpu", "LINUX_2.6.15"),
            ("__kernel_sync_dicache", "LINUX_2.6.15"),
            ("__kernel_sigtramp_rt64", "LINUX_2.6.15"),
        ],
    },
];

/// Real kernels' images, dumped by `vdsotime dump` inside the machines of
/// `cargo xtask kernels`: what the kernel maps, not an emulator's stand-in.
pub const KERNELS: &[Fixture] = &[
    Fixture {
        // Debian bookworm: DT_HASH only, `__kernel_rt_sigreturn` STT_NOTYPE.
        file: "kernels/aarch64-linux-6.1.0-50-arm64.so",
        machine: 183,
        class: ElfClass::Elf64,
        endian: Endian::Little,
        table: &arch::AARCH64,
        hashes: (false, true),
        symbols: &[
            ("__kernel_clock_gettime", "LINUX_2.6.39"),
            ("__kernel_clock_getres", "LINUX_2.6.39"),
            ("__kernel_gettimeofday", "LINUX_2.6.39"),
            ("__kernel_rt_sigreturn", "LINUX_2.6.39"),
        ],
    },
    Fixture {
        // bookworm-backports 6.12: adds `__kernel_getrandom` and DT_GNU_HASH.
        file: "kernels/aarch64-linux-6.12.95+deb12-arm64.so",
        machine: 183,
        class: ElfClass::Elf64,
        endian: Endian::Little,
        table: &arch::AARCH64,
        hashes: (true, true),
        symbols: &[
            ("__kernel_clock_gettime", "LINUX_2.6.39"),
            ("__kernel_clock_getres", "LINUX_2.6.39"),
            ("__kernel_gettimeofday", "LINUX_2.6.39"),
            ("__kernel_getrandom", "LINUX_2.6.39"),
            ("__kernel_rt_sigreturn", "LINUX_2.6.39"),
        ],
    },
    Fixture {
        // armmp-lpae, ARM (not Thumb) code: even addresses; DT_HASH only.
        file: "kernels/arm-linux-6.1.0-50-armmp-lpae.so",
        machine: 40,
        class: ElfClass::Elf32,
        endian: Endian::Little,
        table: &arch::ARM,
        hashes: (false, true),
        symbols: &[
            ("__vdso_clock_gettime", "LINUX_2.6"),
            ("__vdso_clock_gettime64", "LINUX_2.6"),
            ("__vdso_clock_getres", "LINUX_2.6"),
            ("__vdso_gettimeofday", "LINUX_2.6"),
        ],
    },
    Fixture {
        // pseries: STT_FUNC symbols (QEMU's image has STT_NOTYPE ones).
        file: "kernels/powerpc64le-linux-6.1.0-50-powerpc64le.so",
        machine: 21,
        class: ElfClass::Elf64,
        endian: Endian::Little,
        table: &arch::POWERPC64,
        hashes: (true, true),
        symbols: &[
            ("__kernel_clock_gettime", "LINUX_2.6.15"),
            ("__kernel_clock_getres", "LINUX_2.6.15"),
            ("__kernel_gettimeofday", "LINUX_2.6.15"),
            ("__kernel_time", "LINUX_2.6.15"),
            ("__kernel_getcpu", "LINUX_2.6.15"),
            ("__kernel_get_tbfreq", "LINUX_2.6.15"),
            ("__kernel_get_syscall_map", "LINUX_2.6.15"),
            ("__kernel_sync_dicache", "LINUX_2.6.15"),
            ("__kernel_sigtramp_rt64", "LINUX_2.6.15"),
        ],
    },
    Fixture {
        // s390x: its DT_HASH has 64-bit words, beside a GNU hash with 32-bit ones.
        file: "kernels/s390x-linux-6.1.0-50-s390x.so",
        machine: 22,
        class: ElfClass::Elf64,
        endian: Endian::Big,
        table: &arch::S390X,
        hashes: (true, true),
        symbols: &[
            ("__kernel_clock_gettime", "LINUX_2.6.29"),
            ("__kernel_clock_getres", "LINUX_2.6.29"),
            ("__kernel_gettimeofday", "LINUX_2.6.29"),
            ("__kernel_getcpu", "LINUX_2.6.29"),
            ("__kernel_sigreturn", "LINUX_2.6.29"),
            ("__kernel_rt_sigreturn", "LINUX_2.6.29"),
            ("__kernel_restart_syscall", "LINUX_2.6.29"),
        ],
    },
    Fixture {
        // A 32-bit x86 kernel (not the compat vDSO of an x86-64 one): no `__vdso_getcpu`.
        file: "kernels/i686-linux-6.1.0-50-686.so",
        machine: 3,
        class: ElfClass::Elf32,
        endian: Endian::Little,
        table: &arch::I686,
        hashes: (true, true),
        symbols: &[
            ("__vdso_clock_gettime", "LINUX_2.6"),
            ("__vdso_clock_gettime64", "LINUX_2.6"),
            ("__vdso_clock_getres", "LINUX_2.6"),
            ("__vdso_gettimeofday", "LINUX_2.6"),
            ("__vdso_time", "LINUX_2.6"),
            ("__kernel_vsyscall", "LINUX_2.5"),
            ("__kernel_sigreturn", "LINUX_2.5"),
            ("__kernel_rt_sigreturn", "LINUX_2.5"),
        ],
    },
    Fixture {
        // Debian trixie: `__vdso_riscv_hwprobe` besides the time functions.
        file: "kernels/riscv64-linux-6.12.117+deb13-riscv64.so",
        machine: 243,
        class: ElfClass::Elf64,
        endian: Endian::Little,
        table: &arch::RISCV64,
        hashes: (true, true),
        symbols: &[
            ("__vdso_clock_gettime", "LINUX_4.15"),
            ("__vdso_clock_getres", "LINUX_4.15"),
            ("__vdso_gettimeofday", "LINUX_4.15"),
            ("__vdso_getcpu", "LINUX_4.15"),
            ("__vdso_flush_icache", "LINUX_4.15"),
            ("__vdso_riscv_hwprobe", "LINUX_4.15"),
            ("__vdso_rt_sigreturn", "LINUX_4.15"),
        ],
    },
    Fixture {
        // Debian trixie amd64: `__vdso_getrandom` (6.11+) and the SGX enclave entry.
        file: "kernels/x86_64-linux-6.12.117+deb13-amd64.so",
        machine: 62,
        class: ElfClass::Elf64,
        endian: Endian::Little,
        table: &arch::X86_64,
        hashes: (true, true),
        symbols: &[
            ("__vdso_clock_gettime", "LINUX_2.6"),
            ("__vdso_clock_getres", "LINUX_2.6"),
            ("__vdso_gettimeofday", "LINUX_2.6"),
            ("__vdso_time", "LINUX_2.6"),
            ("__vdso_getcpu", "LINUX_2.6"),
            ("__vdso_getrandom", "LINUX_2.6"),
            ("__vdso_sgx_enter_enclave", "LINUX_2.6"),
            ("clock_gettime", "LINUX_2.6"),
            ("clock_getres", "LINUX_2.6"),
            ("gettimeofday", "LINUX_2.6"),
            ("time", "LINUX_2.6"),
            ("getcpu", "LINUX_2.6"),
            ("getrandom", "LINUX_2.6"),
        ],
    },
    Fixture {
        // trixie-backports 7.x amd64: the robust-futex unlock helpers join, and the vDSO
        // reads the generic vDSO data storage of recent kernels.
        file: "kernels/x86_64-linux-7.3.4+deb13-amd64.so",
        machine: 62,
        class: ElfClass::Elf64,
        endian: Endian::Little,
        table: &arch::X86_64,
        hashes: (true, true),
        symbols: &[
            ("__vdso_clock_gettime", "LINUX_2.6"),
            ("__vdso_clock_getres", "LINUX_2.6"),
            ("__vdso_gettimeofday", "LINUX_2.6"),
            ("__vdso_time", "LINUX_2.6"),
            ("__vdso_getcpu", "LINUX_2.6"),
            ("__vdso_getrandom", "LINUX_2.6"),
            ("__vdso_sgx_enter_enclave", "LINUX_2.6"),
            ("__vdso_futex_robust_list32_try_unlock", "LINUX_2.6"),
            ("__vdso_futex_robust_list64_try_unlock", "LINUX_2.6"),
            ("clock_gettime", "LINUX_2.6"),
            ("clock_getres", "LINUX_2.6"),
            ("gettimeofday", "LINUX_2.6"),
            ("time", "LINUX_2.6"),
            ("getcpu", "LINUX_2.6"),
            ("getrandom", "LINUX_2.6"),
        ],
    },
    Fixture {
        // trixie-backports 7.x arm64: DT_GNU_HASH only (since 6.11), so musl's own vDSO
        // lookup, which needs DT_HASH, finds nothing in it.
        file: "kernels/aarch64-linux-7.3.4+deb13-arm64.so",
        machine: 183,
        class: ElfClass::Elf64,
        endian: Endian::Little,
        table: &arch::AARCH64,
        hashes: (true, false),
        symbols: &[
            ("__kernel_clock_gettime", "LINUX_2.6.39"),
            ("__kernel_clock_getres", "LINUX_2.6.39"),
            ("__kernel_gettimeofday", "LINUX_2.6.39"),
            ("__kernel_getrandom", "LINUX_2.6.39"),
            ("__kernel_rt_sigreturn", "LINUX_2.6.39"),
        ],
    },
    Fixture {
        // Debian unstable 7.x riscv64: `__vdso_getrandom` (6.16+); DT_GNU_HASH only.
        file: "kernels/riscv64-linux-7.2.13+deb14-riscv64.so",
        machine: 243,
        class: ElfClass::Elf64,
        endian: Endian::Little,
        table: &arch::RISCV64,
        hashes: (true, false),
        symbols: &[
            ("__vdso_clock_gettime", "LINUX_4.15"),
            ("__vdso_clock_getres", "LINUX_4.15"),
            ("__vdso_gettimeofday", "LINUX_4.15"),
            ("__vdso_getcpu", "LINUX_4.15"),
            ("__vdso_getrandom", "LINUX_4.15"),
            ("__vdso_flush_icache", "LINUX_4.15"),
            ("__vdso_riscv_hwprobe", "LINUX_4.15"),
            ("__vdso_rt_sigreturn", "LINUX_4.15"),
        ],
    },
    Fixture {
        // Debian unstable 7.x armmp-lpae: `__vdso_clock_getres_time64` joins; still
        // DT_HASH only, and no getrandom (none on 32-bit arm).
        file: "kernels/arm-linux-7.2.13+deb14-armmp-lpae.so",
        machine: 40,
        class: ElfClass::Elf32,
        endian: Endian::Little,
        table: &arch::ARM,
        hashes: (false, true),
        symbols: &[
            ("__vdso_clock_gettime", "LINUX_2.6"),
            ("__vdso_clock_gettime64", "LINUX_2.6"),
            ("__vdso_clock_getres", "LINUX_2.6"),
            ("__vdso_clock_getres_time64", "LINUX_2.6"),
            ("__vdso_gettimeofday", "LINUX_2.6"),
        ],
    },
    Fixture {
        // Debian unstable 7.x pseries: `__kernel_getrandom` (6.12+), called through the
        // asm sequence with CR0.SO errors like every powerpc vDSO function.
        file: "kernels/powerpc64le-linux-7.2.13+deb14-powerpc64le.so",
        machine: 21,
        class: ElfClass::Elf64,
        endian: Endian::Little,
        table: &arch::POWERPC64,
        hashes: (true, true),
        symbols: &[
            ("__kernel_clock_gettime", "LINUX_2.6.15"),
            ("__kernel_clock_getres", "LINUX_2.6.15"),
            ("__kernel_gettimeofday", "LINUX_2.6.15"),
            ("__kernel_time", "LINUX_2.6.15"),
            ("__kernel_getcpu", "LINUX_2.6.15"),
            ("__kernel_getrandom", "LINUX_2.6.15"),
            ("__kernel_get_tbfreq", "LINUX_2.6.15"),
            ("__kernel_get_syscall_map", "LINUX_2.6.15"),
            ("__kernel_sync_dicache", "LINUX_2.6.15"),
            ("__kernel_sigtramp_rt64", "LINUX_2.6.15"),
        ],
    },
    Fixture {
        // Debian unstable 7.x s390x: `__kernel_getrandom` (6.12+), beside the 64-bit-word
        // DT_HASH and the GNU hash.
        file: "kernels/s390x-linux-7.2.13+deb14-s390x.so",
        machine: 22,
        class: ElfClass::Elf64,
        endian: Endian::Big,
        table: &arch::S390X,
        hashes: (true, true),
        symbols: &[
            ("__kernel_clock_gettime", "LINUX_2.6.29"),
            ("__kernel_clock_getres", "LINUX_2.6.29"),
            ("__kernel_gettimeofday", "LINUX_2.6.29"),
            ("__kernel_getcpu", "LINUX_2.6.29"),
            ("__kernel_getrandom", "LINUX_2.6.29"),
            ("__kernel_sigreturn", "LINUX_2.6.29"),
            ("__kernel_rt_sigreturn", "LINUX_2.6.29"),
            ("__kernel_restart_syscall", "LINUX_2.6.29"),
        ],
    },
];

/// Every fixture, QEMU's and the kernels'.
pub fn all() -> impl Iterator<Item = &'static Fixture> {
    QEMU_USER.iter().chain(KERNELS)
}
