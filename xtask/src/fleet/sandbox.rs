//! Judging the sandbox probes (xtask/fleet/probe.sh): what root could do outside any
//! sandbox (the control, which must succeed, or a denial inside proves nothing) against
//! what a copy of vdsotime-doctor.service, with its shipped properties, could do.

/// The probes' outcomes: `(probe, target, ok)`.
pub fn outcomes(text: &str) -> Vec<(String, String, bool)> {
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let (probe, target, result) = (w.next()?, w.next()?, w.next()?);
            matches!(probe, "read" | "connect" | "write")
                .then(|| (probe.to_string(), target.to_string(), result == "ok"))
        })
        .collect()
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
        let probe = "mode sandboxed\nread /etc/shadow denied\nconnect 127.0.0.1:9100 ok\nwritable /run/vdsotime-doctor\nwritable /tmp/x\n";
        assert_eq!(
            outcomes(probe),
            [
                ("read".into(), "/etc/shadow".into(), false),
                ("connect".into(), "127.0.0.1:9100".into(), true)
            ]
        );
        let show = "ReadWritePaths=\nRuntimeDirectory=vdsotime-doctor\nStateDirectory=\nPrivateTmp=yes\nRemoveIPC=no\nDynamicUser=yes\n";
        let ok = allowed(show);
        assert!(writable(probe).iter().all(|d| inside(d, &ok)));
        assert!(!inside("/run/vdsotime-doctorX", &ok));
        assert!(!inside("/dev/shm", &ok));
        let old = allowed("ReadWritePaths=/var/lib/prometheus/node-exporter\nPrivateTmp=no\n");
        assert_eq!(old, ["/var/lib/prometheus/node-exporter"]);
    }
}
