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

/// The service's `ExecStart=` command as its words (the unit quotes nothing).
pub fn exec_start() -> Vec<String> {
    let unit = std::fs::read_to_string(fleet_file("vdsotime-doctor.service")).unwrap();
    let lines: Vec<&str> = unit
        .lines()
        .filter_map(|l| l.strip_prefix("ExecStart="))
        .collect();
    assert_eq!(lines.len(), 1, "one ExecStart= line: {lines:?}");
    assert!(
        !lines[0].contains(['"', '\'', '\\', '$', '%']),
        "{}",
        lines[0]
    );
    lines[0].split_whitespace().map(String::from).collect()
}

/// The service's command with the program replaced by the one under test and the
/// textfile directory by `dir`: nothing else changes.
pub fn exec_start_into(dir: &Path) -> Command {
    let words = exec_start();
    assert_eq!(words[0], UNIT_PROGRAM);
    let mut c = Command::new(env!("CARGO_BIN_EXE_vdsotime"));
    let mut redirected = 0;
    for w in &words[1..] {
        match w.strip_prefix(TEXTFILE_DIR) {
            Some(rest) => {
                redirected += 1;
                c.arg(format!("{}{rest}", dir.display()));
            }
            None => {
                c.arg(w);
            }
        }
    }
    assert_eq!(
        redirected, 1,
        "the output file is in {TEXTFILE_DIR}: {words:?}"
    );
    c
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
    let service = service.replace(
        &format!("ExecStart={UNIT_PROGRAM} "),
        &format!("ExecStart={} ", env!("CARGO_BIN_EXE_vdsotime")),
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
    assert!(said.contains("SUCCESS: 4 rules found"), "{said}");
    let said = succeed(
        Command::new("promtool")
            .args(["test", "rules"])
            .arg(fleet_file("vdsotime.rules.test.yml")),
    );
    assert!(said.contains("SUCCESS"), "{said}");
}

/// The unit writes where it may: the output file lies in the one writable directory,
/// and it is the directory node_exporter reads.
#[test]
fn the_service_writes_into_its_only_writable_directory() {
    let unit = std::fs::read_to_string(fleet_file("vdsotime-doctor.service")).unwrap();
    assert!(unit.contains(&format!("ReadWritePaths={TEXTFILE_DIR}\n")));
    assert!(unit.contains(&format!("ConditionPathIsDirectory={TEXTFILE_DIR}\n")));
    let words = exec_start();
    let output = words.iter().position(|w| w == "--output").unwrap();
    assert_eq!(
        Path::new(&words[output + 1]).parent(),
        Some(Path::new(TEXTFILE_DIR))
    );
    assert!(
        words[output + 1].ends_with(".prom"),
        "the collector reads *.prom"
    );
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
        shipped("vdsotime-doctor.service").replace(
            &format!("ExecStart={UNIT_PROGRAM} "),
            "ExecStart=/opt/vt/bin/vdsotime "
        )
    );
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
