//! The C library and the LD_PRELOAD library on 32-bit targets, inside `cargo xtask cross`:
//! `cargo test -p vdsotime-c -p vdsotime-preload` for i686 glibc, i686 musl and armv7 glibc,
//! whose C programs are built with that target's own C library (`VDSOTIME_TEST_CC`).
//!
//! Unlike the core's runs these link dynamically: the products are shared libraries.
//! - i686 glibc: `cc -m32` with gcc-multilib; runs natively.
//! - i686 musl: gcc -m32 with Debian's musl 1.2 for i386 (musl and musl-dev, unpacked into
//!   target/ through the private apt, never installed) and a specs file pointing into it;
//!   programs name that musl as their dynamic linker and run natively. Rust's std wants
//!   `libgcc_s` for unwinding, which musl has none of: a linker script of that name gives
//!   it Rust's own static libunwind (and gcc's `__stack_chk_fail_local`).
//! - armv7 glibc: clang and Debian's armhf cross libc; runs under qemu-arm, which finds the
//!   target's dynamic linker and libraries under `QEMU_LD_PREFIX`.

use std::fs;
use std::path::{Path, PathBuf};

use crate::debs::{self, PrivateApt};
use crate::targets::{self, Linker, Target};
use crate::{apt, binfmt, qemu, toolchain};

/// A C target and how its C programs are built.
#[derive(Debug, Clone, Copy)]
pub struct CTarget {
    pub triple: &'static str,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    I686Glibc,
    I686Musl,
    Armv7Glibc,
}

pub const ALL: &[CTarget] = &[
    CTarget {
        triple: "i686-unknown-linux-gnu",
        kind: Kind::I686Glibc,
    },
    CTarget {
        triple: "i686-unknown-linux-musl",
        kind: Kind::I686Musl,
    },
    CTarget {
        triple: "armv7-unknown-linux-gnueabihf",
        kind: Kind::Armv7Glibc,
    },
];

/// Tests that cannot run under QEMU user mode, with the reason printed as a SKIP line.
const SKIP_UNDER_QEMU: &[(&str, &str)] = &[(
    "clocks_in_signal_handlers_while_threads_start",
    "QEMU user mode's signal emulation does not keep up with a 50 us timer while threads \
     start (killed at its 120 s limit); it runs natively for i686 and x86_64",
)];

/// Where Debian's cross armhf libc lives (its dynamic linker and libraries).
const ARMHF_SYSROOT: &str = "/usr/arm-linux-gnueabihf";

pub fn find(triple: &str) -> Option<CTarget> {
    ALL.iter().copied().find(|t| t.triple == triple)
}

impl CTarget {
    /// The Debian packages it needs on the machine.
    pub fn packages(&self) -> Vec<&'static str> {
        match self.kind {
            Kind::I686Glibc | Kind::I686Musl => vec!["gcc-multilib"],
            Kind::Armv7Glibc => self.target().packages(),
        }
    }

    /// The target as the runner sees it (its default linker; [`prepare`] overrides it).
    pub fn target(&self) -> Target {
        targets::find(self.triple).unwrap_or(Target {
            triple: self.triple,
            qemu: None,
            linker: Linker::Default,
        })
    }

    /// QEMU user mode's name for the architecture, when it does not run natively.
    pub fn qemu(&self) -> Option<&'static str> {
        (self.kind == Kind::Armv7Glibc).then_some("arm")
    }
}

/// How to build and run one C target: rustc flags, environment, extra test arguments.
#[derive(Debug)]
pub struct Prepared {
    pub flags: Vec<String>,
    pub env: Vec<(String, String)>,
    pub emulator: Option<qemu::Emulator>,
    pub skips: Vec<(&'static str, &'static str)>,
}

/// Everything `t` needs, or why it is UNAVAILABLE.
pub fn prepare(t: &CTarget, install: bool, work: &Path) -> Result<Prepared, String> {
    toolchain::ensure_std(
        &t.target(),
        install,
        &work.join(format!("{}.rustup.log", t.triple)),
    )?;
    if let Some(p) = t.packages().into_iter().find(|p| !apt::is_installed(p)) {
        return Err(format!("package {p} missing"));
    }
    let cc_key = || "VDSOTIME_TEST_CC".to_string();
    let linker_key = format!("CARGO_TARGET_{}_LINKER", t.target().env_key());
    let link_args = |args: &[String]| -> Vec<String> {
        args.iter()
            .flat_map(|a| ["-C".to_string(), format!("link-arg={a}")])
            .collect()
    };
    match t.kind {
        Kind::I686Glibc => Ok(Prepared {
            flags: Vec::new(),
            env: vec![(cc_key(), "cc -m32".to_string())],
            emulator: None,
            skips: Vec::new(),
        }),
        Kind::I686Musl => {
            let specs = musl_sysroot(&work.join("musl-i386"))?;
            let mut flags: Vec<String> = ["target-feature=-crt-static", "link-self-contained=no"]
                .iter()
                .flat_map(|f| ["-C".to_string(), f.to_string()])
                .collect();
            let spec_arg = format!("-specs={}", specs.display());
            flags.extend(link_args(std::slice::from_ref(&spec_arg)));
            Ok(Prepared {
                flags,
                env: vec![
                    (linker_key, "gcc".to_string()),
                    (cc_key(), format!("gcc -m32 {spec_arg}")),
                ],
                emulator: None,
                skips: Vec::new(),
            })
        }
        Kind::Armv7Glibc => {
            let gcc_ld = toolchain::rust_tool("gcc-ld")?;
            let driver = [
                "--target=arm-linux-gnueabihf".to_string(),
                "-fuse-ld=lld".to_string(),
                format!("-B{}", gcc_ld.display()),
            ];
            let emulator = qemu::find("arm")?;
            // The tests start the C programs they build: through binfmt_misc, under QEMU.
            binfmt::ensure("arm", &emulator.command)?;
            Ok(Prepared {
                flags: link_args(&driver),
                env: vec![
                    (
                        cc_key(),
                        // -c compiles (the header check) do not use the linker flags.
                        format!(
                            "clang {} -Wno-unused-command-line-argument",
                            driver.join(" ")
                        ),
                    ),
                    ("QEMU_LD_PREFIX".to_string(), ARMHF_SYSROOT.to_string()),
                ],
                emulator: Some(emulator),
                skips: SKIP_UNDER_QEMU.to_vec(),
            })
        }
    }
}

/// Debian's musl for i386, unpacked under `dir` (once), and a gcc specs file for it; returns
/// the specs file.
fn musl_sysroot(dir: &Path) -> Result<PathBuf, String> {
    let root = dir.join("root");
    let libc_so = root.join("lib/i386-linux-musl/libc.so");
    if !libc_so.is_file() {
        let codename = apt::codename().ok_or("no VERSION_CODENAME in /etc/os-release")?;
        let log = dir.join("apt.log");
        let apt = PrivateApt::create(
            &dir.join("apt"),
            &[(codename.clone(), vec!["i386"])],
            &codename,
            &log,
        )?;
        println!("cross: musl for i386: apt-get update (private), download, unpack");
        apt.update();
        for package in ["musl:i386", "musl-dev:i386"] {
            let deb = apt
                .download(package, &dir.join("debs"))
                .map_err(|e| e.to_string())?;
            debs::unpack(&deb, &root)?;
        }
        let _ = fs::remove_dir_all(dir.join("debs"));
    }
    let lib = root.join("usr/lib/i386-linux-musl");
    let original = fs::read_to_string(lib.join("musl-gcc.specs"))
        .map_err(|e| format!("{}: {e}", lib.display()))?;
    // Rust's std links -lgcc_s for unwinding: give it Rust's static libunwind instead.
    let unwind =
        toolchain::rust_sysroot_lib("i686-unknown-linux-musl")?.join("self-contained/libunwind.a");
    let shim = dir.join("libgcc_s");
    fs::create_dir_all(&shim).map_err(|e| format!("{}: {e}", shim.display()))?;
    fs::write(
        shim.join("libgcc_s.so"),
        format!("INPUT({} -lssp_nonshared)\n", unwind.display()),
    )
    .map_err(|e| format!("{}: {e}", shim.display()))?;
    let specs = dir.join("musl-gcc.specs");
    fs::write(&specs, musl_specs(&original, &root, &shim))
        .map_err(|e| format!("{}: {e}", specs.display()))?;
    Ok(specs)
}

/// Debian's musl-gcc.specs, pointed into the unpacked `root`: headers and crt files there,
/// its libc.so first (it is also the dynamic linker), the libgcc_s shim, 32-bit links.
fn musl_specs(original: &str, root: &Path, shim: &Path) -> String {
    let r = root.display();
    original
        .replace(
            "-L/usr/lib/i386-linux-musl",
            &format!(
                "-L{r}/lib/i386-linux-musl -L{r}/usr/lib/i386-linux-musl -L{}",
                shim.display()
            ),
        )
        .replace(
            "/usr/include/i386-linux-musl",
            &format!("{r}/usr/include/i386-linux-musl"),
        )
        .replace(
            " /usr/lib/i386-linux-musl/",
            &format!(" {r}/usr/lib/i386-linux-musl/"),
        )
        .replace(
            "-dynamic-linker /lib/ld-musl-i386.so.1",
            &format!("-m elf_i386 -dynamic-linker {r}/lib/i386-linux-musl/libc.so"),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_point_into_the_sysroot() {
        let original = "*cc1:\n%(cc1_cpu) -nostdinc -isystem /usr/include/i386-linux-musl -isystem include%s\n\n\
                        *link_libgcc:\n-L/usr/lib/i386-linux-musl -L .%s\n\n\
                        *startfile:\n%{!shared: /usr/lib/i386-linux-musl/Scrt1.o} /usr/lib/i386-linux-musl/crti.o crtbeginS.o%s\n\n\
                        *link:\n-dynamic-linker /lib/ld-musl-i386.so.1 -nostdlib\n";
        let s = musl_specs(original, Path::new("/s"), Path::new("/shim"));
        assert!(s.contains("-isystem /s/usr/include/i386-linux-musl"));
        assert!(s.contains("-L/s/lib/i386-linux-musl -L/s/usr/lib/i386-linux-musl -L/shim -L .%s"));
        assert!(s.contains(
            "{!shared: /s/usr/lib/i386-linux-musl/Scrt1.o} /s/usr/lib/i386-linux-musl/crti.o"
        ));
        assert!(s.contains("-m elf_i386 -dynamic-linker /s/lib/i386-linux-musl/libc.so"));
        assert!(!s.contains(" /usr/"), "{s}");
    }
}
