//! The service's two steps, as the unit runs them (commands read from the unit; only the
//! program and the directories swapped): the unprivileged doctor writes into its runtime
//! directory, the privileged `ExecStartPost=` installs that file into the textfile
//! directory. Then the faults of that install: a full file system, a read-only one, a
//! directory the caller may not write, a half-written source. Each must fail the step
//! with a clear message and leave the previous file whole. The file systems are real
//! tmpfs mounts (root only), the unwritable directory is refused to a real process.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::fleet::{exec_start_into, exec_start_post_into};
use crate::*;

const REQUIREMENT: &str = "tmpfs-mount";
pub const OLD: &str = "# HELP vdsotime_doctor_info the previous run\nvdsotime_doctor_info 1\n";

/// Runs the unit's `ExecStart=` into `runtime`; fails unless it succeeds (0 or 2).
fn doctor_into(runtime: &Path) {
    let (c, out, err) = parts(&process::output(
        exec_start_into(runtime).args(["--duration", "0.005"]),
        LIMIT,
    ));
    assert!(c == 0 || c == 2, "ExecStart exited {c}: {out}{err}");
}

/// Runs the unit's `ExecStartPost=` from `runtime` into `textfile`: exit code, stderr.
pub fn install_into(runtime: &Path, textfile: &Path, wrap: Option<&[&str]>) -> (i32, String) {
    let post = exec_start_post_into(runtime, textfile);
    let mut cmd = match wrap {
        Some(words) => {
            let mut c = Command::new(words[0]);
            c.args(&words[1..])
                .arg(post.get_program())
                .args(post.get_args());
            c
        }
        None => post,
    };
    run_post(&mut cmd, LIMIT)
}

/// Runs an `ExecStartPost=` command within `limit`: exit code, stderr (stdout is empty).
pub fn run_post(cmd: &mut Command, limit: std::time::Duration) -> (i32, String) {
    let (c, out, err) = parts(&process::output(cmd, limit));
    assert!(out.is_empty(), "{out}");
    (c, err)
}

/// The names in `dir`, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A tmpfs of `size` mounted on `dir`, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(test: &str, dir: &Path, size: &str) -> Option<Tmpfs> {
        let o = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0755"),
                "tmpfs",
            ])
            .arg(dir)
            .output();
        match o {
            Ok(o) if o.status.success() => Some(Tmpfs(dir.to_path_buf())),
            Ok(o) => {
                let why = String::from_utf8_lossy(&o.stderr).trim().to_string();
                skip::skip(test, REQUIREMENT, format!("mount -t tmpfs: {why}"));
                None
            }
            Err(e) => {
                skip::skip(test, REQUIREMENT, format!("mount: {e}"));
                None
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// The runtime directory with this machine's metrics in it, and an empty textfile
/// directory beside it.
pub fn dirs(name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let base = scratch(name);
    let runtime = base.join("run");
    let textfile = base.join("textfile");
    std::fs::create_dir(&runtime).unwrap();
    std::fs::create_dir(&textfile).unwrap();
    doctor_into(&runtime);
    (base, runtime, textfile)
}

#[test]
fn the_privileged_step_installs_the_doctors_file_0644_owned_by_its_caller() {
    let (base, runtime, textfile) = dirs("fleet-install");
    std::fs::write(textfile.join("vdsotime.prom"), OLD).unwrap();
    let (c, err) = install_into(&runtime, &textfile, None);
    assert_eq!(c, 0, "{err}");
    assert!(err.is_empty(), "{err}");
    let installed = textfile.join("vdsotime.prom");
    let meta = std::fs::metadata(&installed).unwrap();
    assert_eq!(meta.permissions().mode() & 0o7777, 0o644);
    let me = std::fs::metadata(&base).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (me.uid(), me.gid()));
    assert_eq!(
        std::fs::read(&installed).unwrap(),
        std::fs::read(runtime.join("vdsotime.prom")).unwrap()
    );
    assert_eq!(
        names(&textfile),
        ["vdsotime.prom"],
        "a temporary file was left"
    );
    std::fs::remove_dir_all(&base).unwrap();
}

#[test]
fn a_half_written_source_is_not_installed() {
    let (base, runtime, textfile) = dirs("fleet-half");
    std::fs::write(textfile.join("vdsotime.prom"), OLD).unwrap();
    let src = runtime.join("vdsotime.prom");
    let whole = std::fs::read_to_string(&src).unwrap();
    std::fs::write(&src, &whole[..whole.len() / 2]).unwrap();
    let (c, err) = install_into(&runtime, &textfile, None);
    assert_eq!(c, 1, "{err}");
    assert!(
        err.contains("not a whole `vdsotime doctor --format prometheus` document")
            && err.contains("vdsotime.prom left unchanged"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(textfile.join("vdsotime.prom")).unwrap(),
        OLD
    );
    std::fs::remove_dir_all(&base).unwrap();
}

#[test]
fn a_full_file_system_keeps_the_previous_file_and_fails_the_step() {
    const TEST: &str = "a_full_file_system_keeps_the_previous_file_and_fails_the_step";
    let (base, runtime, textfile) = dirs("fleet-full");
    let Some(fs) = Tmpfs::mount(TEST, &textfile, "64k") else {
        return;
    };
    std::fs::write(textfile.join("vdsotime.prom"), OLD).unwrap();
    // Fill it: write until the file system refuses.
    let mut filler = std::fs::File::create(textfile.join("filler")).unwrap();
    let block = vec![0u8; 4096];
    while std::io::Write::write_all(&mut filler, &block).is_ok() {}
    drop(filler);
    let (c, err) = install_into(&runtime, &textfile, None);
    assert_eq!(c, 1, "{err}");
    assert!(
        err.contains("No space left on device") && err.contains("vdsotime.prom left unchanged"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(textfile.join("vdsotime.prom")).unwrap(),
        OLD
    );
    assert_eq!(
        names(&textfile),
        ["filler", "vdsotime.prom"],
        "a temporary file was left"
    );
    drop(fs);
    std::fs::remove_dir_all(&base).unwrap();
}

#[test]
fn a_read_only_file_system_keeps_the_previous_file_and_fails_the_step() {
    const TEST: &str = "a_read_only_file_system_keeps_the_previous_file_and_fails_the_step";
    let (base, runtime, textfile) = dirs("fleet-ro");
    let Some(fs) = Tmpfs::mount(TEST, &textfile, "1m") else {
        return;
    };
    std::fs::write(textfile.join("vdsotime.prom"), OLD).unwrap();
    let ro = Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(&textfile)
        .status()
        .unwrap();
    assert!(ro.success());
    let (c, err) = install_into(&runtime, &textfile, None);
    assert_eq!(c, 1, "{err}");
    assert!(
        err.contains("Read-only file system") && err.contains("vdsotime.prom left unchanged"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(textfile.join("vdsotime.prom")).unwrap(),
        OLD
    );
    drop(fs);
    std::fs::remove_dir_all(&base).unwrap();
}

/// A directory the caller may not write: as root, the step run as `nobody` (setpriv);
/// as another user, a directory made read-only for it.
#[test]
fn an_unwritable_directory_keeps_the_previous_file_and_fails_the_step() {
    let (base, runtime, textfile) = dirs("fleet-unwritable");
    std::fs::write(textfile.join("vdsotime.prom"), OLD).unwrap();
    for d in [&base, &runtime, &textfile] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let src = runtime.join("vdsotime.prom");
    std::fs::set_permissions(&src, std::fs::Permissions::from_mode(0o644)).unwrap();
    let root = std::fs::metadata(&base).unwrap().uid() == 0;
    let nobody: &[&str] = &[
        "setpriv",
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "--",
    ];
    let wrap = if root {
        Some(nobody)
    } else {
        std::fs::set_permissions(&textfile, std::fs::Permissions::from_mode(0o555)).unwrap();
        None
    };
    let (c, err) = install_into(&runtime, &textfile, wrap);
    assert_eq!(c, 1, "{err}");
    assert!(
        err.contains("Permission denied") && err.contains("vdsotime.prom left unchanged"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(textfile.join("vdsotime.prom")).unwrap(),
        OLD
    );
    assert_eq!(names(&textfile), ["vdsotime.prom"]);
    std::fs::set_permissions(&textfile, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::remove_dir_all(&base).unwrap();
}
