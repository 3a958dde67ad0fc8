//! tracefs: where it is (mounted if it is not), the id of the `raw_syscalls:sys_enter`
//! tracepoint and where its `id` and `args` fields lie in a sample.

use std::path::{Path, PathBuf};

/// Where a kernel's tracefs normally is, and the old place under debugfs.
const PLACES: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// The environment variable naming another tracefs directory (a test's, or a tracefs
/// mounted elsewhere).
pub const TRACEFS_ENV: &str = "VDSOTIME_TRACEFS";

/// Why the tracepoint cannot be had.
#[derive(Debug)]
pub enum TraceError {
    /// Not permitted: the caller lacks a privilege (exit 77).
    Denied(String),
    /// Not there: no tracefs, or a kernel without syscall tracepoints.
    Missing(String),
}

/// The `raw_syscalls:sys_enter` tracepoint: its id and its record layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SysEnter {
    /// The tracepoint's id, perf's `config` for `PERF_TYPE_TRACEPOINT`.
    pub id: u64,
    /// Offset and size of the `id` field (the system call number).
    pub nr: (usize, usize),
    /// Offset of `args[0]` and the size of one argument.
    pub arg0: (usize, usize),
}

/// Whether this process runs with raised privileges (setuid, setgid or file
/// capabilities: the kernel's `AT_SECURE`): then whoever started it is not trusted, and
/// no environment variable steers it.
pub fn privileged_start() -> bool {
    // SAFETY: getauxval reads this process's auxiliary vector; 0 for an absent entry.
    unsafe { libc::getauxval(libc::AT_SECURE) != 0 }
}

/// The environment variable `name`, unless the process started with raised privileges.
pub fn env_override(name: &str) -> Option<std::ffi::OsString> {
    if privileged_start() {
        return None;
    }
    std::env::var_os(name)
}

/// Finds tracefs, mounting it at /sys/kernel/tracing where no tracefs is mounted.
pub fn locate() -> Result<PathBuf, TraceError> {
    if let Some(dir) = env_override(TRACEFS_ENV) {
        return Ok(PathBuf::from(dir));
    }
    for place in PLACES.iter().map(Path::new) {
        match std::fs::metadata(place.join("events")) {
            Ok(m) if m.is_dir() => return Ok(place.to_path_buf()),
            // Mounted, but its mode (0700 by default) lets only its owner in.
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                let mode = std::fs::metadata(place)
                    .map(|m| {
                        format!(
                            "{:o}",
                            std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o7777
                        )
                    })
                    .unwrap_or_else(|_| "unknown".into());
                return Err(TraceError::Denied(format!(
                    "tracefs is mounted at {} with mode {mode}, which lets only its owner \
                     in ({e})",
                    place.display()
                )));
            }
            _ => {}
        }
    }
    let target = Path::new(PLACES[0]);
    let (src, fstype, dir) = (c"nodev", c"tracefs", c"/sys/kernel/tracing");
    // SAFETY: every pointer is a NUL-terminated string that outlives the call; no data.
    let rc = unsafe {
        libc::mount(
            src.as_ptr(),
            dir.as_ptr(),
            fstype.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if rc == 0 && target.join("events").is_dir() {
        return Ok(target.to_path_buf());
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EPERM | libc::EACCES) => Err(TraceError::Denied(format!(
            "tracefs is not mounted and mounting it at {} was refused ({e})",
            target.display()
        ))),
        _ => Err(TraceError::Missing(format!(
            "tracefs is not mounted and cannot be mounted at {} ({e}): a kernel \
             without CONFIG_TRACING",
            target.display()
        ))),
    }
}

/// Reads `raw_syscalls:sys_enter` under `tracefs`.
pub fn sys_enter(tracefs: &Path) -> Result<SysEnter, TraceError> {
    let events = tracefs.join("events");
    // A tracefs that only root may open reads as "permission denied" here, not as absent.
    if let Err(e) = std::fs::read_dir(&events) {
        return Err(if e.kind() == std::io::ErrorKind::PermissionDenied {
            TraceError::Denied(format!("{}: {e}", events.display()))
        } else {
            TraceError::Missing(format!("{}: {e}", events.display()))
        });
    }
    let dir = events.join("raw_syscalls/sys_enter");
    let read = |name: &str| {
        std::fs::read_to_string(dir.join(name)).map_err(|e| match e.kind() {
            std::io::ErrorKind::PermissionDenied => {
                TraceError::Denied(format!("{}: {e}", dir.join(name).display()))
            }
            _ => TraceError::Missing(format!(
                "{} has no raw_syscalls/sys_enter tracepoint ({e}): this kernel was \
                 built without syscall tracepoints (CONFIG_FTRACE_SYSCALLS=n)",
                tracefs.display()
            )),
        })
    };
    let id = read("id")?;
    let format = read("format")?;
    let bad = |what: &str| TraceError::Missing(format!("{}: {what}", dir.join("format").display()));
    let id = id
        .trim()
        .parse()
        .map_err(|_| bad("an id that is not a number"))?;
    let nr = field(&format, "id").ok_or_else(|| bad("no `id` field"))?;
    let args = field(&format, "args").ok_or_else(|| bad("no `args` field"))?;
    Ok(SysEnter {
        id,
        nr,
        arg0: (args.0, args.1 / 6),
    })
}

/// Offset and size of the field `name` in a tracepoint's `format` text, from its line
/// `field:long id; offset:8; size:8; signed:1;` (tab-separated).
pub fn field(format: &str, name: &str) -> Option<(usize, usize)> {
    format.lines().find_map(|line| {
        let decl = line.trim().strip_prefix("field:")?;
        let decl = decl.split(';').next()?;
        let ident = decl.rsplit(' ').next()?;
        let ident = ident.split('[').next()?;
        if ident != name {
            return None;
        }
        let num = |key: &str| {
            line.split(';')
                .find_map(|p| p.trim().strip_prefix(key))
                .and_then(|v| v.parse().ok())
        };
        Some((num("offset:")?, num("size:")?))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORMAT: &str = "name: sys_enter\nID: 443\nformat:\n\
        \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
        \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
        \tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n\
        \tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;\n";

    #[test]
    fn reads_the_fields_of_a_format() {
        assert_eq!(field(FORMAT, "id"), Some((8, 8)));
        assert_eq!(field(FORMAT, "args"), Some((16, 48)));
        assert_eq!(field(FORMAT, "common_pid"), Some((4, 4)));
        assert_eq!(field(FORMAT, "nope"), None);
    }

    #[test]
    fn a_tracefs_without_the_tracepoint_is_named_as_such() {
        let dir = std::env::temp_dir().join(format!("vdsotime-tracefs-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("events")).unwrap();
        let e = sys_enter(&dir).unwrap_err();
        let _ = std::fs::remove_dir_all(&dir);
        match e {
            TraceError::Missing(m) => assert!(m.contains("CONFIG_FTRACE_SYSCALLS=n"), "{m}"),
            TraceError::Denied(m) => panic!("denied: {m}"),
        }
    }
}
