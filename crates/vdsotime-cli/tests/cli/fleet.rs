//! The fleet files shipped in `fleet/`: systemd accepts the units, promtool accepts the
//! alert rules and their unit tests pass, and the service's command is the one the
//! end-to-end test (`fleet_e2e`) runs.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::*;

/// node_exporter's textfile directory on Debian, where the service writes.
pub const TEXTFILE_DIR: &str = "/var/lib/prometheus/node-exporter";
/// The program in the unit: install.sh --prefix /usr puts it there.
pub const UNIT_PROGRAM: &str = "/usr/bin/vdsotime";

/// A file of `fleet/`.
pub fn fleet_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fleet")
        .join(name)
}

/// The doctor's runtime directory (`RuntimeDirectory=vdsotime-doctor`), where the
/// unprivileged run writes.
pub const RUNTIME_DIR: &str = "/run/vdsotime-doctor";

/// The words of the unit's one `KEY=` line (`ExecStart`, `ExecStartPost`), with a leading
/// `+` (run with full privileges) removed; the unit quotes nothing.
pub fn command_line(key: &str) -> Vec<String> {
    let unit = std::fs::read_to_string(fleet_file("vdsotime-doctor.service")).unwrap();
    let prefix = format!("{key}=");
    let lines: Vec<&str> = unit
        .lines()
        .filter_map(|l| l.strip_prefix(prefix.as_str()))
        .collect();
    assert_eq!(lines.len(), 1, "one {key}= line: {lines:?}");
    assert!(
        !lines[0].contains(['"', '\'', '\\', '$', '%']),
        "{}",
        lines[0]
    );
    let line = lines[0].strip_prefix('+').unwrap_or(lines[0]);
    line.split_whitespace().map(String::from).collect()
}

/// The service's `ExecStart=` command as its words.
pub fn exec_start() -> Vec<String> {
    command_line("ExecStart")
}

/// The unit's command `key` with the program replaced by the one under test and each
/// directory in `dirs` (the unit's path, this test's path) swapped: nothing else changes.
fn command_into(key: &str, dirs: &[(&str, &Path)]) -> Command {
    let words = command_line(key);
    assert_eq!(words[0], UNIT_PROGRAM);
    let mut c = Command::new(env!("CARGO_BIN_EXE_vdsotime"));
    c.env_remove("VDSOTIME_FAULT");
    for w in &words[1..] {
        let swapped = dirs.iter().find_map(|(unit_dir, dir)| {
            w.strip_prefix(unit_dir)
                .map(|rest| format!("{}{rest}", dir.display()))
        });
        c.arg(swapped.unwrap_or_else(|| w.clone()));
    }
    c
}

/// The service's `ExecStart=` command, its runtime directory swapped for `runtime`.
pub fn exec_start_into(runtime: &Path) -> Command {
    command_into("ExecStart", &[(RUNTIME_DIR, runtime)])
}

/// The service's privileged `ExecStartPost=` command, its runtime directory swapped for
/// `runtime` and the textfile directory for `textfile`.
pub fn exec_start_post_into(runtime: &Path, textfile: &Path) -> Command {
    command_into(
        "ExecStartPost",
        &[(RUNTIME_DIR, runtime), (TEXTFILE_DIR, textfile)],
    )
}

/// Whether `program` runs (`--version`); prints the SKIP line if not.
pub fn available(test: &str, requirement: &str, program: &str) -> bool {
    match Command::new(program).arg("--version").output() {
        Ok(o) if o.status.success() => true,
        Ok(o) => {
            skip::skip(
                test,
                requirement,
                format!("{program} --version: {}", o.status),
            );
            false
        }
        Err(e) => {
            skip::skip(test, requirement, format!("{program}: {e}"));
            false
        }
    }
}

/// Runs `cmd` and fails with its output unless it succeeds; returns its stdout and stderr.
fn succeed(cmd: &mut Command) -> String {
    let o = process::output(cmd, LIMIT);
    let (c, out, err) = parts(&o);
    assert_eq!(c, 0, "{cmd:?} exited {c}\n{out}{err}");
    out + &err
}

/// `systemd-analyze verify` accepts both units without a single warning. It checks that
/// the program and the man page the units name exist, so the copies it reads name the
/// tool under test and MANPATH holds its generated man pages.
#[test]
fn systemd_accepts_the_units() {
    const TEST: &str = "systemd_accepts_the_units";
    if !available(TEST, "systemd-analyze", "systemd-analyze") {
        return;
    }
    let dir = scratch("fleet-units");
    let man = dir.join("man");
    std::fs::create_dir_all(man.join("man1")).unwrap();
    let (c, _, err) = parts(&run(&["man", "--dir", man.join("man1").to_str().unwrap()]));
    assert_eq!(c, 0, "{err}");
    let service = std::fs::read_to_string(fleet_file("vdsotime-doctor.service")).unwrap();
    assert!(service.contains(&format!("ExecStart={UNIT_PROGRAM} ")));
    let service = service
        .replace(
            &format!("ExecStart={UNIT_PROGRAM} "),
            &format!("ExecStart={} ", env!("CARGO_BIN_EXE_vdsotime")),
        )
        .replace(
            &format!("ExecStartPost=+{UNIT_PROGRAM} "),
            &format!("ExecStartPost=+{} ", env!("CARGO_BIN_EXE_vdsotime")),
        );
    std::fs::write(dir.join("vdsotime-doctor.service"), service).unwrap();
    std::fs::copy(
        fleet_file("vdsotime-doctor.timer"),
        dir.join("vdsotime-doctor.timer"),
    )
    .unwrap();
    let said = succeed(
        Command::new("systemd-analyze")
            .env("MANPATH", &man)
            .arg("verify")
            .arg(dir.join("vdsotime-doctor.service"))
            .arg(dir.join("vdsotime-doctor.timer")),
    );
    assert!(said.trim().is_empty(), "systemd-analyze warns:\n{said}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `promtool check rules` accepts the rules, and `promtool test rules` runs their unit
/// tests: each alert fires when it must, and never for the healthy host.
#[test]
fn promtool_checks_and_tests_the_rules() {
    const TEST: &str = "promtool_checks_and_tests_the_rules";
    if !available(TEST, "prometheus", "promtool") {
        return;
    }
    let said = succeed(
        Command::new("promtool")
            .args(["check", "rules"])
            .arg(fleet_file("vdsotime.rules.yml")),
    );
    assert!(said.contains("SUCCESS: 7 rules found"), "{said}");
    let said = succeed(
        Command::new("promtool")
            .args(["test", "rules"])
            .arg(fleet_file("vdsotime.rules.test.yml")),
    );
    assert!(said.contains("SUCCESS"), "{said}");
}

/// Least privilege: the doctor writes only into its own runtime directory, with no
/// capability but CAP_SYSLOG; the privileged step installs that very file into the
/// directory node_exporter reads, as a `*.prom` file; a run has a time limit.
#[test]
fn the_doctor_writes_only_its_runtime_directory_and_root_installs_the_file() {
    let unit = std::fs::read_to_string(fleet_file("vdsotime-doctor.service")).unwrap();
    for line in [
        "RuntimeDirectory=vdsotime-doctor\n",
        "DynamicUser=yes\n",
        "CapabilityBoundingSet=CAP_SYSLOG\n",
        "AmbientCapabilities=CAP_SYSLOG\n",
        "ProtectSystem=strict\n",
        "TimeoutStartSec=2min\n",
        &format!("ConditionPathIsDirectory={TEXTFILE_DIR}\n"),
    ] {
        assert!(unit.contains(line), "the unit lacks {line}");
    }
    assert!(!unit.contains("CAP_DAC_OVERRIDE"));
    assert!(!unit.contains("ReadWritePaths="));
    assert!(unit.contains(&format!("ExecStartPost=+{UNIT_PROGRAM} ")));
    let start = exec_start();
    let at = |words: &[String], opt: &str| {
        let i = words.iter().position(|w| w == opt).unwrap();
        words[i + 1].clone()
    };
    let written = at(&start, "--output");
    assert_eq!(Path::new(&written).parent(), Some(Path::new(RUNTIME_DIR)));
    let post = command_line("ExecStartPost");
    assert_eq!(at(&post, "--install-metrics"), written);
    let installed = at(&post, "--output");
    assert_eq!(
        Path::new(&installed).parent(),
        Some(Path::new(TEXTFILE_DIR))
    );
    assert!(installed.ends_with(".prom"), "the collector reads *.prom");
}

/// Runs install.sh with the built tool, staged under `stage`, with `args`.
fn install(stage: &Path, args: &[&str]) {
    let built = Path::new(env!("CARGO_BIN_EXE_vdsotime")).parent().unwrap();
    succeed(
        Command::new("sh")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh"))
            .args(args)
            .arg("--from")
            .arg(built)
            .env("DESTDIR", stage),
    );
}

/// install.sh puts the units where systemd looks for the prefix (or where told), naming
/// the program it installed, and the rules under DATADIR, all under DESTDIR.
#[test]
fn install_script_installs_the_units_and_the_rules() {
    let stage = scratch("install-fleet");
    let read =
        |p: &str| std::fs::read_to_string(stage.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
    let shipped = |name: &str| std::fs::read_to_string(fleet_file(name)).unwrap();

    install(&stage, &["--prefix", "/opt/vt"]);
    let service = read("opt/vt/lib/systemd/system/vdsotime-doctor.service");
    assert_eq!(
        service,
        shipped("vdsotime-doctor.service")
            .replace(
                &format!("ExecStart={UNIT_PROGRAM} "),
                "ExecStart=/opt/vt/bin/vdsotime "
            )
            .replace(
                &format!("ExecStartPost=+{UNIT_PROGRAM} "),
                "ExecStartPost=+/opt/vt/bin/vdsotime "
            )
            .replace(
                "Documentation=man:vdsotime-doctor(1) file:/usr/share/doc/vdsotime/",
                "Documentation=man:vdsotime-doctor(1) file:/opt/vt/share/doc/vdsotime/"
            )
    );
    // Every page the unit names is installed with it.
    for page in ["fleet.md", "doctor.md"] {
        assert_eq!(
            read(&format!("opt/vt/share/doc/vdsotime/{page}")),
            std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../../docs")
                    .join(page)
            )
            .unwrap()
        );
    }
    assert!(service.contains("file:/opt/vt/share/doc/vdsotime/fleet.md"));
    assert!(service.contains("man:vdsotime-doctor(1)"));
    assert!(stage
        .join("opt/vt/share/man/man1/vdsotime-doctor.1")
        .is_file());
    assert_eq!(
        read("opt/vt/lib/systemd/system/vdsotime-doctor.timer"),
        shipped("vdsotime-doctor.timer")
    );
    assert_eq!(
        read("opt/vt/share/vdsotime/vdsotime.rules.yml"),
        shipped("vdsotime.rules.yml")
    );

    install(
        &stage,
        &["--prefix", "/usr", "--systemdsystemunitdir", "/etc/units"],
    );
    assert_eq!(
        read("etc/units/vdsotime-doctor.service"),
        shipped("vdsotime-doctor.service"),
        "with --prefix /usr the unit is the shipped one"
    );
    assert_eq!(
        read("usr/share/vdsotime/vdsotime.rules.yml"),
        shipped("vdsotime.rules.yml")
    );
    std::fs::remove_dir_all(&stage).unwrap();
}
