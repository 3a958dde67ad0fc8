//! What a default boot showed besides pass or fail: the vDSO's symbols and speed-up, the
//! SKIP lines of its tests (and the getrandom rule about them), the dumped vDSO image.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use super::machines::Machine;
use super::{payload, report};

/// The vDSO's symbols and hash tables (`vdsotime info`) and its speed-up (`bench`).
pub fn describe(out: &mut String, console: &report::Console) {
    if let Some(info) = console.run("info") {
        let syms: Vec<String> = report::symbols(&info.lines)
            .iter()
            .map(|(s, v)| format!("{s}@{v}"))
            .collect();
        let _ = writeln!(out, "  vDSO symbols: {}", syms.join(" "));
        if let Some(h) = info
            .lines
            .iter()
            .find(|l| l.trim_start().starts_with("hash tables:"))
        {
            let _ = writeln!(out, "  vDSO {}", h.trim());
        }
    }
    if let Some(bench) = console.run("bench") {
        let rows: Vec<String> = report::ratios(&bench.lines)
            .iter()
            .filter(|(_, _, path)| path != "syscall")
            .map(|(f, x, _)| format!("{f} {x}"))
            .collect();
        let _ = writeln!(out, "  vDSO vs syscall under TCG: {}", rows.join(", "));
    }
}

/// The SKIP lines the tests printed inside (a program whose whole output is shown prints
/// other lines too).
pub fn skipped_inside(console: &report::Console) -> Vec<String> {
    console
        .runs
        .iter()
        .filter(|r| r.verdict == "PASS" && !payload::is_tool_run(&r.label))
        .flat_map(|r| {
            r.lines
                .iter()
                .filter(|l| {
                    let l = l.trim_start();
                    l.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("skip"))
                })
                .map(move |l| format!("{}: {}", r.label, l.trim()))
        })
        .collect()
}

/// Keeps the image `vdsotime dump` wrote inside, and says whether a fixture holds it.
pub fn dump(
    root: &Path,
    work: &Path,
    dump_dir: Option<&Path>,
    m: &Machine,
    release: &str,
    console: &report::Console,
    out: &mut String,
) {
    let name = format!("{}-linux-{release}.so", m.arch);
    let bytes = match console.files.get(payload::DUMP_LABEL) {
        Some(Ok(bytes)) => bytes,
        Some(Err(e)) => {
            let _ = writeln!(out, "  dump: lost on the console: {e}");
            return;
        }
        None => {
            let _ = writeln!(out, "  dump: none received");
            return;
        }
    };
    let kept = work.join(m.name).join(&name);
    let _ = fs::write(&kept, bytes);
    let fixture = root
        .join("crates/vdsotime/tests/fixtures/kernels")
        .join(&name);
    let same = fs::read(&fixture).is_ok_and(|f| &f == bytes);
    let note = if same {
        "identical to the fixture"
    } else {
        "not among the fixtures (--dump DIR stores it)"
    };
    let _ = writeln!(
        out,
        "  dump: {} ({} bytes): {note}",
        kept.display(),
        bytes.len()
    );
    if let Some(dir) = dump_dir {
        let to = dir.join(&name);
        match fs::write(&to, bytes) {
            Ok(()) => {
                let _ = writeln!(out, "  dump: written to {}", to.display());
            }
            Err(e) => {
                let _ = writeln!(out, "  dump: {}: {e}", to.display());
            }
        }
    }
}

/// SKIP requirements a machine cannot meet whatever its kernel: no strace inside (the
/// doctor's seccomp proof and the path test cover the vDSO's getrandom there instead), a
/// musl target's libc, a 32-bit target's address space.
const NOT_THE_KERNELS: &[&str] = &["(needs strace)", "(needs glibc)", "(needs bits64)"];

/// Where the kernel exports the vDSO's getrandom (by its configuration or by the symbols
/// `info` listed), its tests must run: a getrandom test's SKIP for any other reason is a
/// failure, and so is a configuration that disagrees with the image, or (on a 64-bit
/// machine, where the library uses it) a getrandom path other than the vDSO's.
pub fn getrandom_failures(config: bool, bits64: bool, console: &report::Console) -> Vec<String> {
    let mut out = Vec::new();
    let Some(info) = console.run("info") else {
        return out;
    };
    let exported = report::symbols(&info.lines)
        .iter()
        .any(|(s, _)| s.ends_with("_getrandom"));
    if exported != config {
        out.push(format!(
            "CONFIG_VDSO_GETRANDOM {} but the vDSO {} getrandom",
            if config { "set" } else { "unset" },
            if exported { "exports" } else { "lacks" }
        ));
    }
    if !(config || exported) {
        return out;
    }
    let path = getrandom_path(console);
    if bits64 && !path.contains("_getrandom@") {
        out.push(format!("getrandom's path is {path:?}, not the vDSO's"));
    }
    for run in console
        .runs
        .iter()
        .filter(|r| r.label.starts_with("getrandom"))
    {
        for line in run
            .lines
            .iter()
            .filter(|l| l.trim_start().starts_with("SKIP"))
        {
            if !NOT_THE_KERNELS.iter().any(|n| line.contains(n)) {
                out.push(format!(
                    "getrandom test skipped on a getrandom kernel: {}",
                    line.trim()
                ));
            }
        }
    }
    out
}

/// The `getrandom: ...` line of `vdsotime info` (the path and the state parameters).
pub fn getrandom_path(console: &report::Console) -> String {
    console
        .run("info")
        .and_then(|info| {
            info.lines
                .iter()
                .find_map(|l| l.strip_prefix("getrandom: "))
        })
        .unwrap_or("not reported")
        .to_string()
}

/// The getrandom column of the platform table: whether the vDSO exports it, the path,
/// and how the getrandom test binaries ended.
pub fn getrandom_summary(config: bool, console: &report::Console) -> String {
    let runs: Vec<String> = console
        .runs
        .iter()
        .filter(|r| r.label.starts_with("getrandom"))
        .map(|r| {
            let skips = r
                .lines
                .iter()
                .filter(|l| l.trim_start().starts_with("SKIP"))
                .count();
            format!(
                "{} {}{}",
                r.label,
                r.verdict,
                if skips > 0 {
                    format!(" ({skips} SKIP)")
                } else {
                    String::new()
                }
            )
        })
        .collect();
    format!(
        "getrandom: vDSO {}; path {}; tests: {}",
        if config { "exports it" } else { "has none" },
        getrandom_path(console),
        runs.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A console with `info` listing `symbol` and a getrandom test run printing `skip`.
    fn console(symbol: &str, path: &str, skip: &str) -> report::Console {
        let log = format!(
            "@vm start info\n@vm out info | | symbol | version |\n\
             @vm out info | | {symbol} | LINUX_2.6 |\n@vm out info | getrandom: {path}\n\
             @vm end info PASS exit_status:_0 1ms\n@vm start getrandom_syscalls\n\
             @vm out getrandom_syscalls | {skip}\n\
             @vm end getrandom_syscalls PASS exit_status:_0 1ms\n@vm done\n"
        );
        report::parse(&log)
    }

    #[test]
    fn getrandom_kernels_must_run_the_getrandom_tests() {
        let vdso = "__vdso_getrandom@LINUX_2.6, 144-byte states";
        let strace = "SKIP a: strace would trace the emulator (needs strace)";
        let c = console("__vdso_getrandom", vdso, strace);
        assert_eq!(getrandom_failures(true, true, &c), Vec::<String>::new());
        // A skip for anything the kernel provides fails the machine.
        let timens = "SKIP b: unshare --time refused (needs timens)";
        let f = getrandom_failures(true, true, &console("__vdso_getrandom", vdso, timens));
        assert_eq!(f.len(), 1, "{f:?}");
        // The configuration and the image disagree; the path is the syscall.
        let c = console("__vdso_time", "the system call", strace);
        assert_eq!(getrandom_failures(true, true, &c).len(), 2);
        // No getrandom in the kernel: no rule applies.
        assert!(getrandom_failures(false, true, &console("__vdso_time", "x", timens)).is_empty());
        assert!(getrandom_summary(true, &c).contains("getrandom_syscalls PASS (1 SKIP)"));
    }

    /// A program shown whole (the auxiliary clocks' ones) lists only its SKIP lines; a
    /// tool's run none.
    #[test]
    fn only_the_skip_lines_of_the_tests_are_listed() {
        let log = "@vm start aux_clocks_c
@vm out aux_clocks_c | set to 1000000 s
                   @vm out aux_clocks_c | SKIP aux_clocks (libvdsotime): no seccomp
                   @vm end aux_clocks_c PASS exit_status:_0 1ms
@vm start kp
                   @vm out kp | skip x: y
@vm out kp | test result: ok. 1 passed
                   @vm end kp PASS exit_status:_0 1ms
@vm start info
                   @vm out info | SKIP nothing
@vm end info PASS exit_status:_0 1ms
";
        assert_eq!(
            skipped_inside(&report::parse(log)),
            [
                "aux_clocks_c: SKIP aux_clocks (libvdsotime): no seccomp",
                "kp: skip x: y"
            ]
        );
    }
}
