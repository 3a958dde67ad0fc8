//! The privileged install step against a hostile source. The unprivileged doctor owns its
//! runtime directory, so whatever it leaves there as `vdsotime.prom` may be made to hurt
//! the root step that reads it: a symbolic link to a file only root may read, a FIFO that
//! would block the open, a hard link, an endless device, an oversized file, lines of another exporter's
//! families. Each must be refused promptly with its reason on stderr (the journal), the
//! installed file left byte for byte as it was, and no temporary file left behind.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::fleet::exec_start_post_into;
use crate::fleet_faults::{dirs, names, run_post, OLD};
use crate::*;

/// Long enough for any refusal; a step blocked on a FIFO hits it and fails the test.
const PROMPT: Duration = Duration::from_secs(20);

/// A metrics document of the doctor's own shape.
const DOCUMENT: &str = "# HELP vdsotime_doctor_info x\n# TYPE vdsotime_doctor_info gauge\n\
                        vdsotime_doctor_info{secret=\"root only\"} 1\n";

/// Runs the step from `runtime` into `textfile` and checks that it refused with a
/// message containing `why`, promptly, leaving the previous file and nothing else.
fn refused(runtime: &Path, textfile: &Path, why: &str) {
    let start = Instant::now();
    let (c, err) = run_post(&mut exec_start_post_into(runtime, textfile), PROMPT);
    let took = start.elapsed();
    assert_eq!(c, 1, "{err}");
    assert!(
        err.contains(why) && err.contains("vdsotime.prom left unchanged"),
        "expected {why:?}: {err}"
    );
    assert!(took < PROMPT / 2, "the refusal took {took:?}");
    assert_eq!(
        std::fs::read(textfile.join("vdsotime.prom")).unwrap(),
        OLD.as_bytes()
    );
    assert_eq!(
        names(textfile),
        ["vdsotime.prom"],
        "a temporary file was left"
    );
}

/// The textfile directory holding the previous run's file.
fn previous(textfile: &Path) {
    std::fs::write(textfile.join("vdsotime.prom"), OLD).unwrap();
}

/// A valid document that only its owner may read (root, when the tests run as root).
fn secret(base: &Path) -> PathBuf {
    let secret = base.join("secret.prom");
    std::fs::write(&secret, DOCUMENT).unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    secret
}

/// The doctor's file in `runtime` removed, for `make` to put something else there.
fn swap_source(runtime: &Path, make: impl FnOnce(&Path) -> std::io::Result<()>) -> PathBuf {
    let src = runtime.join("vdsotime.prom");
    std::fs::remove_file(&src).unwrap();
    make(&src).unwrap();
    src
}

fn is_root(base: &Path) -> bool {
    std::fs::metadata(base).unwrap().uid() == 0
}

/// As root the step could read the target of the link whatever its mode, so only the
/// refusal to follow a link stops it; the secret is a valid document, so nothing else
/// would. A link in a directory of the source's path is refused as well.
#[test]
fn a_symlink_to_a_root_only_file_is_refused_as_a_link() {
    let (base, runtime, textfile) = dirs("fleet-hostile-symlink");
    previous(&textfile);
    let secret = secret(&base);
    let src = swap_source(&runtime, |src| std::os::unix::fs::symlink(&secret, src));
    refused(&runtime, &textfile, "symbolic link");
    if is_root(&base) {
        assert_eq!(std::fs::metadata(&secret).unwrap().uid(), 0);
    }

    // The runtime directory itself reached through a link.
    std::fs::remove_file(&src).unwrap();
    std::fs::copy(&secret, &src).unwrap();
    let linked = base.join("linked-run");
    std::os::unix::fs::symlink(&runtime, &linked).unwrap();
    refused(&linked, &textfile, "symbolic link");
    std::fs::remove_dir_all(&base).unwrap();
}

/// A hard link is the file itself under a second name: no link to refuse, so the count
/// of names tells it from the doctor's own file, which has one.
#[test]
fn a_hard_link_to_a_root_only_file_is_refused() {
    let (base, runtime, textfile) = dirs("fleet-hostile-hardlink");
    previous(&textfile);
    let secret = secret(&base);
    swap_source(&runtime, |src| std::fs::hard_link(&secret, src));
    refused(&runtime, &textfile, "hard links");
    std::fs::remove_dir_all(&base).unwrap();
}

/// Opening a FIFO for reading blocks until a writer comes: the step must not wait.
#[test]
fn a_fifo_is_refused_without_blocking() {
    let (base, runtime, textfile) = dirs("fleet-hostile-fifo");
    previous(&textfile);
    swap_source(&runtime, |src| {
        let made = Command::new("mkfifo").arg(src).status()?;
        assert!(made.success());
        Ok(())
    });
    refused(&runtime, &textfile, "not a regular file");
    std::fs::remove_dir_all(&base).unwrap();
}

/// `/dev/zero` never ends: as a link to it (what the unprivileged service can make) and,
/// as root, as a device node of its own.
#[test]
fn dev_zero_is_refused_without_reading_it() {
    const TEST: &str = "dev_zero_is_refused_without_reading_it";
    let (base, runtime, textfile) = dirs("fleet-hostile-zero");
    previous(&textfile);
    let src = swap_source(&runtime, |src| std::os::unix::fs::symlink("/dev/zero", src));
    refused(&runtime, &textfile, "symbolic link");
    std::fs::remove_file(&src).unwrap();
    let node = Command::new("mknod")
        .arg(&src)
        .args(["c", "1", "5"])
        .output()
        .unwrap();
    if node.status.success() {
        refused(&runtime, &textfile, "not a regular file");
    } else {
        let why = String::from_utf8_lossy(&node.stderr).trim().to_string();
        skip::skip(TEST, "mknod", format!("mknod c 1 5: {why}"));
    }
    std::fs::remove_dir_all(&base).unwrap();
}

/// A regular file far larger than any document, shaped to pass the old checks: the
/// doctor's first line, zeros (a hole), a last newline.
#[test]
fn an_oversized_file_is_refused_after_a_bounded_read() {
    let (base, runtime, textfile) = dirs("fleet-hostile-large");
    previous(&textfile);
    let src = runtime.join("vdsotime.prom");
    std::fs::write(&src, DOCUMENT).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&src).unwrap();
    f.set_len(64 << 20).unwrap();
    std::os::unix::fs::FileExt::write_at(&f, b"\n", (64 << 20) - 1).unwrap();
    drop(f);
    refused(&runtime, &textfile, "larger than");
    std::fs::remove_dir_all(&base).unwrap();
}

/// The doctor's own document with another exporter's family added: as samples alone, and
/// as a HELP or TYPE line.
#[test]
fn injected_node_lines_are_refused() {
    let (base, runtime, textfile) = dirs("fleet-hostile-node");
    previous(&textfile);
    let src = runtime.join("vdsotime.prom");
    let own = std::fs::read_to_string(&src).unwrap();
    for injected in [
        "node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 1e12\n",
        "# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.\n",
        "# TYPE node_cpu_seconds_total counter\n",
    ] {
        std::fs::write(&src, format!("{own}{injected}")).unwrap();
        refused(&runtime, &textfile, "node_cpu_seconds_total");
    }
    std::fs::remove_dir_all(&base).unwrap();
}
