//! x86-64 musl for the link matrix: libvdsotime and the preload built for
//! x86_64-unknown-linux-musl by a cargo run of their own, and C programs built with Debian's
//! musl-gcc (musl-tools): glibc's gcc with musl's specs file.
//!
//! Rust's std asks for `-lgcc_s` (its unwinder) in a shared library built for musl without
//! `crt-static`; this gcc's libgcc is glibc's. A linker script of that name gives it Rust's
//! own static libunwind.a instead, which then lives inside libvdsotime.so; programs linking
//! the static archive take the same file (support::rust_unwinder). musl-gcc's specs file
//! knows no `-static-pie`; a copy that does builds those programs.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::matrix::Toolchain;
use super::{build_dir, rust_unwinder};

const TRIPLE: &str = "x86_64-unknown-linux-musl";

/// The musl toolchain and the directory holding the musl build of both libraries, built
/// once per test process; `Err` says what this machine lacks.
pub fn build() -> Result<(Toolchain, PathBuf), String> {
    static BUILT: OnceLock<Result<(Toolchain, PathBuf), String>> = OnceLock::new();
    BUILT.get_or_init(build_once).clone()
}

fn build_once() -> Result<(Toolchain, PathBuf), String> {
    let specs = musl_gcc_specs()?;
    let unwinder = rust_unwinder(TRIPLE)?;
    // Next to target/<profile>, kept between runs so that cargo builds incrementally.
    let target_dir = build_dir()
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps")
        .join("vdsotime-c-musl");
    let shim = target_dir.join("libgcc_s");
    fs::create_dir_all(&shim).map_err(|e| format!("{}: {e}", shim.display()))?;
    fs::write(
        shim.join("libgcc_s.so"),
        format!("INPUT({})\n", unwinder.display()),
    )
    .map_err(|e| format!("{}: {e}", shim.display()))?;

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let env_key = TRIPLE.to_uppercase().replace('-', "_");
    let out = Command::new(cargo)
        .args(["build", "--locked", "--offline", "--target", TRIPLE])
        .args(["-p", "vdsotime-c", "-p", "vdsotime-preload", "--target-dir"])
        .arg(&target_dir)
        .env(format!("CARGO_TARGET_{env_key}_LINKER"), "musl-gcc")
        .env(
            format!("CARGO_TARGET_{env_key}_RUSTFLAGS"),
            format!(
                "-C target-feature=-crt-static -C link-self-contained=no -C link-arg=-L{}",
                shim.display()
            ),
        )
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    assert!(
        out.status.success(),
        "cargo build --target {TRIPLE} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let static_pie_specs = target_dir.join("musl-gcc-static-pie.specs");
    let original = fs::read_to_string(&specs).map_err(|e| format!("{}: {e}", specs.display()))?;
    fs::write(&static_pie_specs, with_static_pie(&original)?)
        .map_err(|e| format!("{}: {e}", static_pie_specs.display()))?;
    let toolchain = Toolchain {
        name: "musl-gcc",
        cc: vec!["musl-gcc".into()],
        static_pie_cc: Some(vec![
            "gcc".into(),
            "-specs".into(),
            static_pie_specs.display().to_string(),
        ]),
        archive_extra: vec![unwinder.display().to_string()],
        glibc: false,
    };
    Ok((toolchain, target_dir.join(TRIPLE).join("debug")))
}

/// The specs file the musl-gcc script hands gcc (`-specs "FILE"`), if musl-gcc is there.
fn musl_gcc_specs() -> Result<PathBuf, String> {
    let out = Command::new("sh")
        .args(["-c", "command -v musl-gcc"])
        .output()
        .map_err(|e| format!("cannot run sh: {e}"))?;
    let script = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || script.is_empty() {
        return Err("musl-gcc is not installed (Debian: musl-tools)".to_string());
    }
    let text = fs::read_to_string(&script).map_err(|e| format!("{script}: {e}"))?;
    let specs = text
        .split("-specs")
        .nth(1)
        .and_then(|rest| rest.trim_start().split('"').nth(1))
        .ok_or_else(|| format!("{script} names no specs file"))?;
    Ok(PathBuf::from(specs))
}

/// musl-gcc's specs with `-static-pie`: musl's rcrt1.o (which relocates the program) for
/// its start file, and the linker told `-static -pie` without a dynamic linker.
fn with_static_pie(specs: &str) -> Result<String, String> {
    let start = specs
        .split_whitespace()
        .find(|w| w.ends_with("/Scrt1.o}"))
        .ok_or("musl-gcc's specs have no start file %{!shared: .../Scrt1.o}")?;
    let scrt1 = start.trim_end_matches('}');
    let rcrt1 = scrt1.replace("/Scrt1.o", "/rcrt1.o");
    let interp = specs
        .split("-dynamic-linker ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .ok_or("musl-gcc's specs name no dynamic linker")?;
    let old_start = format!("%{{!shared: {scrt1}}}");
    let old_link = format!("-dynamic-linker {interp}");
    if !specs.contains(&old_start) {
        return Err(format!("musl-gcc's specs have no {old_start}"));
    }
    Ok(specs
        .replace(
            &old_start,
            &format!("%{{static-pie:{rcrt1};!shared:{scrt1}}}"),
        )
        .replace(
            &old_link,
            &format!(
                "%{{!static-pie:{old_link}}} %{{static-pie:-static -pie --no-dynamic-linker -z text}}"
            ),
        ))
}
