//! Judging the sandbox probes (xtask/fleet/probe.sh): what root could do outside any
//! sandbox (the control, which must succeed, or a denial inside proves nothing) against
//! what a copy of vdsotime-doctor.service, with its shipped properties, could do.

/// One probe's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// `read`, `connect` or `write`.
    pub probe: String,
    pub target: String,
    /// `None` when denied; for a read, the hash of what was read.
    pub got: Option<String>,
}

/// The probes' outcomes.
pub fn outcomes(text: &str) -> Vec<Outcome> {
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let (probe, target, result) = (w.next()?, w.next()?, w.next()?);
            matches!(probe, "read" | "connect" | "write").then(|| Outcome {
                probe: probe.to_string(),
                target: target.to_string(),
                got: (result == "ok").then(|| w.next().unwrap_or("").to_string()),
            })
        })
        .collect()
}

/// True when the sandboxed outcome `inside` kept from the process what the control got:
/// denied, or (a file hidden by an empty node) other bytes than the control read.
pub fn kept_from(inside: &Outcome, control: &Outcome) -> bool {
    match (&inside.got, &control.got) {
        (None, _) => true,
        (Some(got), Some(real)) => inside.probe == "read" && got != real,
        (Some(_), None) => false,
    }
}

/// The directories the sandboxed probe could create a file in.
pub fn writable(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("writable "))
        .map(str::to_string)
        .collect()
}

/// The places the unit may write to, from `systemctl show` of it: `ReadWritePaths=`, the
/// directories systemd makes for it (`RuntimeDirectory=` under /run, `StateDirectory=`
/// under /var/lib, with a dynamic user's /var/lib/private), its private /tmp and /var/tmp
/// (`PrivateTmp=yes`), and IPC objects that `RemoveIPC=yes` deletes when it stops.
pub fn allowed(show: &str) -> Vec<String> {
    let mut out = Vec::new();
    let value = |key: &str| {
        show.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .unwrap_or("")
            .to_string()
    };
    out.extend(
        value("ReadWritePaths")
            .split_whitespace()
            .map(|p| p.trim_start_matches('-').to_string()),
    );
    for (key, base) in [
        ("RuntimeDirectory", "/run"),
        ("StateDirectory", "/var/lib"),
        ("CacheDirectory", "/var/cache"),
        ("LogsDirectory", "/var/log"),
    ] {
        for d in value(key).split_whitespace() {
            out.push(format!("{base}/{d}"));
            if value("DynamicUser") == "yes" && base != "/run" {
                out.push(format!("{base}/private/{d}"));
            }
        }
    }
    if value("PrivateTmp") == "yes" {
        out.extend(["/tmp".to_string(), "/var/tmp".to_string()]);
    }
    if value("RemoveIPC") == "yes" {
        out.extend(["/dev/shm".to_string(), "/dev/mqueue".to_string()]);
    }
    out
}

/// True when `dir` is one of `allowed` or below one.
pub fn inside(dir: &str, allowed: &[String]) -> bool {
    allowed.iter().any(|a| {
        dir == a
            || dir
                .strip_prefix(a.as_str())
                .is_some_and(|r| r.starts_with('/'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_and_allowed_places() {
        let probe = "mode sandboxed\nread /etc/shadow denied\nconnect 127.0.0.1:9100 ok\nread /k ok e3b0\nwritable /run/vdsotime-doctor\nwritable /tmp/x\n";
        let o = outcomes(probe);
        assert_eq!(o.len(), 3);
        assert_eq!(
            (
                o[0].probe.as_str(),
                o[0].target.as_str(),
                o[0].got.as_deref()
            ),
            ("read", "/etc/shadow", None)
        );
        assert_eq!(o[1].got.as_deref(), Some(""));
        let control = outcomes("read /k ok 5f1a\nconnect 127.0.0.1:9100 ok\n");
        assert!(kept_from(&o[0], &control[0]));
        assert!(
            kept_from(&o[2], &control[0]),
            "an empty node hides the secret"
        );
        assert!(!kept_from(&control[0], &control[0]));
        assert!(!kept_from(&o[1], &control[1]));
        let show = "ReadWritePaths=\nRuntimeDirectory=vdsotime-doctor\nStateDirectory=\nPrivateTmp=yes\nRemoveIPC=no\nDynamicUser=yes\n";
        let ok = allowed(show);
        assert!(writable(probe).iter().all(|d| inside(d, &ok)));
        assert!(!inside("/run/vdsotime-doctorX", &ok));
        assert!(!inside("/dev/shm", &ok));
        let old = allowed("ReadWritePaths=/var/lib/prometheus/node-exporter\nPrivateTmp=no\n");
        assert_eq!(old, ["/var/lib/prometheus/node-exporter"]);
    }
}
