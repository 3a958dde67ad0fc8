//! The architectures `cargo xtask cross` proves, and how each one is linked and run.
//!
//! Every binary is linked statically, so no guest sysroot is needed under QEMU: musl targets
//! link with Rust's own `rust-lld` and self-contained musl (nothing to install), glibc targets
//! with clang as the driver, Rust's bundled lld, and Debian's cross `libc.a` and `libgcc.a`.
//! Not Debian's `gcc-<triple>` cross compilers: they conflict with `gcc-multilib`, which
//! other parts of the project install, and apt would remove one for the other.

/// How a target's test binaries are linked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Linker {
    /// The target's default linker (`cc`), which links x86_64 musl with Rust's self-contained crt.
    Default,
    /// Rust's bundled `rust-lld` with self-contained musl: no package needed.
    RustLld,
    /// clang driving lld for GNU triple `gnu`, with static glibc and libgcc from `packages`.
    Clang {
        gnu: &'static str,
        packages: &'static [&'static str],
    },
}

/// One architecture to prove.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// Rust target triple.
    pub triple: &'static str,
    /// `qemu-<name>` runs the binaries; `None` runs them natively on this x86_64 host.
    pub qemu: Option<&'static str>,
    pub linker: Linker,
}

/// The set, in the order they run (native first: quickest feedback).
pub const ALL: &[Target] = &[
    Target {
        triple: "x86_64-unknown-linux-musl",
        qemu: None,
        linker: Linker::Default,
    },
    Target {
        triple: "i686-unknown-linux-musl",
        qemu: None,
        linker: Linker::RustLld,
    },
    Target {
        triple: "aarch64-unknown-linux-musl",
        qemu: Some("aarch64"),
        linker: Linker::RustLld,
    },
    Target {
        triple: "armv7-unknown-linux-gnueabihf",
        qemu: Some("arm"),
        linker: Linker::Clang {
            gnu: "arm-linux-gnueabihf",
            packages: &["libc6-dev-armhf-cross", "libgcc-12-dev-armhf-cross"],
        },
    },
    Target {
        triple: "riscv64gc-unknown-linux-gnu",
        qemu: Some("riscv64"),
        linker: Linker::Clang {
            gnu: "riscv64-linux-gnu",
            packages: &["libc6-dev-riscv64-cross", "libgcc-12-dev-riscv64-cross"],
        },
    },
    Target {
        triple: "s390x-unknown-linux-gnu",
        qemu: Some("s390x"),
        linker: Linker::Clang {
            gnu: "s390x-linux-gnu",
            packages: &["libc6-dev-s390x-cross", "libgcc-12-dev-s390x-cross"],
        },
    },
    Target {
        triple: "powerpc64le-unknown-linux-gnu",
        qemu: Some("ppc64le"),
        linker: Linker::Clang {
            gnu: "powerpc64le-linux-gnu",
            packages: &["libc6-dev-ppc64el-cross", "libgcc-12-dev-ppc64el-cross"],
        },
    },
];

impl Target {
    /// The triple as cargo spells it in `CARGO_TARGET_<TRIPLE>_*` variables.
    pub fn env_key(&self) -> String {
        self.triple.to_ascii_uppercase().replace(['-', '.'], "_")
    }

    /// Extra rustc/rustdoc flags. glibc is linked statically (musl already is by default),
    /// by clang for the GNU triple with lld from `gcc_ld` (Rust's `gcc-ld/ld.lld`).
    pub fn extra_flags(&self, gcc_ld: &std::path::Path) -> Vec<String> {
        match self.linker {
            Linker::Clang { gnu, .. } => [
                "target-feature=+crt-static".to_string(),
                format!("link-arg=--target={gnu}"),
                "link-arg=-fuse-ld=lld".to_string(),
                format!("link-arg=-B{}", gcc_ld.display()),
            ]
            .into_iter()
            .flat_map(|flag| ["-C".to_string(), flag])
            .collect(),
            Linker::Default | Linker::RustLld => Vec::new(),
        }
    }

    /// The linker to name in `CARGO_TARGET_<TRIPLE>_LINKER`, if not the default.
    pub fn linker_command(&self) -> Option<&'static str> {
        match self.linker {
            Linker::Default => None,
            Linker::RustLld => Some("rust-lld"),
            Linker::Clang { .. } => Some(CLANG),
        }
    }

    /// Debian packages this target needs besides QEMU.
    pub fn packages(&self) -> Vec<&'static str> {
        match self.linker {
            Linker::Clang { packages, .. } => {
                [CLANG_PACKAGE].iter().chain(packages).copied().collect()
            }
            Linker::Default | Linker::RustLld => Vec::new(),
        }
    }
}

/// The C compiler driver for glibc targets, and the Debian package that provides it.
pub const CLANG: &str = "clang";
pub const CLANG_PACKAGE: &str = "clang";

/// Looks a triple up among the supported ones.
pub fn find(triple: &str) -> Option<Target> {
    ALL.iter().copied().find(|t| t.triple == triple)
}
