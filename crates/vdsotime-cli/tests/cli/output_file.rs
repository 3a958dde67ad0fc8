//! `doctor --output FILE`: the document replaces FILE whole (written beside it, then
//! renamed), and a run that cannot write leaves the previous FILE as it was, exits 1 and
//! says why.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use crate::doctor::profile_path;
use crate::*;

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The document without its run-time line, which differs between two runs.
fn without_timestamp(doc: &str) -> String {
    doc.lines()
        .filter(|l| !l.starts_with("vdsotime_doctor_last_run_timestamp_seconds "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `vdsotime doctor` on the healthy profile, its Prometheus metrics written to `file`.
fn healthy_metrics_to(file: &Path) -> Vec<String> {
    metrics_to(Path::new(&profile_path("healthy")), file)
}

/// `doctor --profile PROFILE --format prometheus --output FILE`.
fn metrics_to(profile: &Path, file: &Path) -> Vec<String> {
    let (profile, file) = (profile.to_str().unwrap(), file.to_str().unwrap());
    [
        "doctor",
        "--profile",
        profile,
        "--format",
        "prometheus",
        "--output",
        file,
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn output_replaces_the_file_with_the_whole_document() {
    let dir = scratch("output-replaces");
    let file = dir.join("vdsotime.prom");
    fs::write(&file, "previous\n").unwrap();
    let hpet = profile_path("hpet");
    let args = ["doctor", "--profile", &hpet, "--format", "prometheus"];
    let (c, stdout_doc, err) = parts(&run(&args));
    assert_eq!(c, 2, "{err}");

    let f = file.to_str().unwrap();
    let (c, out, err) = parts(&run(&[&args[..], &["--output", f]].concat()));
    assert_eq!(
        c, 2,
        "the verdict's exit status, as without --output: {err}"
    );
    assert!(out.is_empty() && err.is_empty(), "{out}{err}");
    let written = fs::read_to_string(&file).unwrap();
    assert_eq!(without_timestamp(&written), without_timestamp(&stdout_doc));
    assert!(written.ends_with('\n'));
    assert_eq!(names(&dir), ["vdsotime.prom"], "no temporary file left");
    let mode = fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode & 0o044, 0o044, "readable by node_exporter: {mode:o}");

    // -o and the other formats too.
    let (c, _, err) = parts(&run(&["doctor", "--profile", &hpet, "--json", "-o", f]));
    assert_eq!(c, 2, "{err}");
    let v: serde_json::Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(v["verdict"]["status"], "degraded");
    fs::remove_dir_all(&dir).unwrap();
}

/// A run that cannot rename over FILE (here FILE is a directory) keeps it, removes its
/// temporary file and exits 1 naming both.
#[test]
fn output_failure_keeps_the_previous_file() {
    let dir = scratch("output-rename-fails");
    let target = dir.join("vdsotime.prom");
    fs::create_dir(&target).unwrap();
    fs::write(target.join("kept"), "previous\n").unwrap();
    let args = healthy_metrics_to(&target);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (c, out, err) = parts(&run(&args));
    assert_eq!(c, 1, "{out}{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.starts_with("vdsotime: cannot rename ") && err.contains("left unchanged"),
        "{err}"
    );
    assert_eq!(
        names(&dir),
        ["vdsotime.prom"],
        "the temporary file is removed"
    );
    assert_eq!(
        fs::read_to_string(target.join("kept")).unwrap(),
        "previous\n"
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// A directory the doctor may not write to: the previous file stays, exit 1. As root
/// (who may write anywhere) the doctor runs as nobody through setpriv(1).
#[test]
fn output_into_an_unwritable_directory_keeps_the_previous_file() {
    let dir = scratch("output-unwritable");
    let file = dir.join("vdsotime.prom");
    fs::write(&file, "previous\n").unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o555)).unwrap();
    // The profile copied where nobody may read it: the checkout may lie in a directory
    // only its owner can enter (a clone under `mktemp -d`).
    let profiles = scratch("output-unwritable-profile");
    let profile = profiles.join("healthy.json");
    fs::copy(profile_path("healthy"), &profile).unwrap();
    let args = metrics_to(&profile, &file);
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let mut cmd = if root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]);
        c.arg(env!("CARGO_BIN_EXE_vdsotime"));
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_vdsotime"))
    };
    cmd.args(&args);
    let o = cmd.output().expect("setpriv (util-linux) or vdsotime");
    let (c, out, err) = parts(&o);
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(c, 1, "{out}{err}");
    assert!(
        err.starts_with("vdsotime: cannot write ")
            && err.contains("Permission denied")
            && err.contains("left unchanged"),
        "{err}"
    );
    assert_eq!(fs::read_to_string(&file).unwrap(), "previous\n");
    assert_eq!(names(&dir), ["vdsotime.prom"]);
    fs::remove_dir_all(&dir).unwrap();
    fs::remove_dir_all(&profiles).unwrap();
}
