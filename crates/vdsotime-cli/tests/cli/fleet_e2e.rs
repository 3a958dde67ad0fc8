//! The fleet set-up end to end, with Debian's real programs on loopback ports: the
//! service's own two commands (read from the unit; only the program and the directories
//! are swapped for the ones under test), the doctor's `ExecStart=` into its runtime
//! directory and the `ExecStartPost=` that installs the file, fill a directory that
//! `prometheus-node-exporter` serves through its textfile collector: first this machine's
//! verdict, then degraded ones (the replayed hpet, then tsc_watchdog profiles); a
//! `prometheus` server scrapes that node_exporter every second with the shipped rules
//! loaded, and its HTTP API shows exactly one alert firing for each, its root cause. The
//! rules' `for:` durations (minutes, so a blip does not page anyone) are rewritten to 2 s
//! in the copy the server loads: nothing else of the rules changes. Every program started
//! here is killed when the test ends, even on a failure.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::doctor::profile_path;
use crate::fleet::{available, exec_start_into, exec_start_post_into, fleet_file};
use crate::*;

/// A server process, killed and reaped when dropped.
struct Daemon {
    name: &'static str,
    child: Child,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Daemon {
    /// Starts `cmd` with its output in `log`.
    fn start(name: &'static str, cmd: &mut Command, log: &Path) -> Daemon {
        let log = std::fs::File::create(log).unwrap();
        let child = cmd
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        Daemon { name, child }
    }

    /// Fails if the server has exited.
    fn alive(&mut self) {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!("{} exited: {status}", self.name);
        }
    }
}

/// A loopback port no one listens on now.
fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// The body of `http://127.0.0.1:port{path}` if the server answers 200.
fn get(port: u16, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut reply = String::new();
    s.read_to_string(&mut reply).ok()?;
    let (head, body) = reply.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200")
        .then(|| body.to_string())
        .or_else(|| head.starts_with("HTTP/1.0 200").then(|| body.to_string()))
}

/// Polls `probe` every 250 ms until it returns a value, for at most `limit`.
fn wait_for<T>(
    what: &str,
    limit: Duration,
    d: &mut Daemon,
    mut probe: impl FnMut() -> Option<T>,
) -> T {
    let start = Instant::now();
    loop {
        d.alive();
        if let Some(v) = probe() {
            return v;
        }
        assert!(start.elapsed() < limit, "{what}: not after {limit:?}");
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// The `vdsotime_` lines and `node_textfile_scrape_error` of a node_exporter scrape.
fn scrape(port: u16, node: &mut Daemon) -> String {
    let body = wait_for("node_exporter's /metrics", LIMIT, node, || {
        get(port, "/metrics")
    });
    assert!(
        body.lines().any(|l| l == "node_textfile_scrape_error 0"),
        "the textfile collector failed:\n{body}"
    );
    body.lines()
        .filter(|l| l.starts_with("vdsotime_"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs the service's two commands, the doctor into `dir/run` with `extra` arguments,
/// then the install into `textfile`; the doctor's exit code.
fn run_service(dir: &Path, textfile: &Path, extra: &[&str]) -> i32 {
    let runtime = dir.join("run");
    std::fs::create_dir_all(&runtime).unwrap();
    let o = process::output(exec_start_into(&runtime).args(extra), LIMIT);
    let (c, out, err) = parts(&o);
    assert!(
        c == 0 || c == 2,
        "the service's command exited {c}: {out}{err}"
    );
    assert!(out.is_empty(), "{out}");
    let o = process::output(&mut exec_start_post_into(&runtime, textfile), LIMIT);
    let (post, out, err) = parts(&o);
    assert_eq!(
        post, 0,
        "the service's ExecStartPost exited {post}: {out}{err}"
    );
    c
}

/// The shipped rules with every `for:` set to 2 s.
fn rules_for_the_test() -> String {
    let rules = std::fs::read_to_string(fleet_file("vdsotime.rules.yml")).unwrap();
    let mut rewritten = 0;
    let text: Vec<String> = rules
        .lines()
        .map(|l| match l.trim_start().strip_prefix("for: ") {
            Some(_) => {
                rewritten += 1;
                format!("{}for: 2s", &l[..l.len() - l.trim_start().len()])
            }
            None => l.to_string(),
        })
        .collect();
    assert_eq!(rewritten, 7, "every rule has a for:");
    text.join("\n") + "\n"
}

/// The firing alerts of the server's /api/v1/alerts, as (name, clocksource label).
fn firing(body: &str) -> Vec<(String, String)> {
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    let mut out: Vec<(String, String)> = v["data"]["alerts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["state"] == "firing")
        .map(|a| {
            let l = &a["labels"];
            let s = |k: &str| l[k].as_str().unwrap_or("").to_string();
            (s("alertname"), s("clocksource"))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn node_exporter_and_prometheus_see_the_degraded_host() {
    const TEST: &str = "node_exporter_and_prometheus_see_the_degraded_host";
    for program in ["prometheus-node-exporter", "prometheus", "promtool"] {
        if !available(TEST, "prometheus", program) {
            return;
        }
    }
    let dir = scratch("fleet-e2e");
    let textfile = dir.join("textfile");
    std::fs::create_dir(&textfile).unwrap();

    let node_port = free_port();
    let mut node = Daemon::start(
        "prometheus-node-exporter",
        Command::new("prometheus-node-exporter")
            .arg(format!("--web.listen-address=127.0.0.1:{node_port}"))
            .arg("--collector.disable-defaults")
            .arg("--collector.textfile")
            .arg(format!(
                "--collector.textfile.directory={}",
                textfile.display()
            )),
        &dir.join("node-exporter.log"),
    );

    // This machine, as the timer runs it.
    let code = run_service(&dir, &textfile, &[]);
    let here = scrape(node_port, &mut node);
    let healthy = if code == 0 { 1 } else { 0 };
    assert!(
        here.lines()
            .any(|l| l == format!("vdsotime_doctor_healthy {healthy}")),
        "{here}"
    );
    eprintln!("--- this machine (exit {code}):\n{here}");

    // A degraded host: the hpet profile replayed.
    let hpet = profile_path("hpet");
    assert_eq!(run_service(&dir, &textfile, &["--profile", &hpet]), 2);
    let degraded = scrape(node_port, &mut node);
    for line in [
        "vdsotime_doctor_healthy 0",
        "vdsotime_vdso_serves{clock=\"MONOTONIC\",function=\"clock_gettime\"} 0",
        "vdsotime_findings{code=\"clocksource_not_vdso_capable\",severity=\"degraded\"} 1",
    ] {
        assert!(
            degraded.lines().any(|l| l == line),
            "no {line}:\n{degraded}"
        );
    }
    eprintln!("--- degraded (hpet profile):\n{degraded}");

    // Prometheus with the shipped rules.
    std::fs::write(dir.join("vdsotime.rules.yml"), rules_for_the_test()).unwrap();
    std::fs::write(
        dir.join("prometheus.yml"),
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             rule_files:\n  - vdsotime.rules.yml\n\
             scrape_configs:\n  - job_name: node\n    static_configs:\n      \
             - targets: ['127.0.0.1:{node_port}']\n"
        ),
    )
    .unwrap();
    let prom_port = free_port();
    let mut prom = Daemon::start(
        "prometheus",
        Command::new("prometheus")
            .arg(format!(
                "--config.file={}",
                dir.join("prometheus.yml").display()
            ))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{prom_port}")),
        &dir.join("prometheus.log"),
    );
    // One root cause, one alert: the clocksource, not also the slow calls.
    let expected = [(
        "VdsotimeClocksourceNotVdsoCapable".to_string(),
        "hpet".to_string(),
    )];
    let alerts = wait_for("the hpet host's alert firing", LIMIT, &mut prom, || {
        get(prom_port, "/api/v1/alerts").filter(|b| firing(b) == expected)
    });
    eprintln!("--- /api/v1/alerts:\n{alerts}");
    let query = "vdsotime_vdso_serves{function=\"clock_gettime\",clock=\"MONOTONIC\"} == 0";
    let encoded: String = query
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let answer = get(prom_port, &format!("/api/v1/query?query={encoded}")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&answer).unwrap();
    let hosts = v["data"]["result"].as_array().unwrap();
    assert_eq!(hosts.len(), 1, "{answer}");
    assert_eq!(
        hosts[0]["metric"]["instance"],
        format!("127.0.0.1:{node_port}")
    );
    eprintln!("--- {query}:\n{answer}");

    // The same host, its TSC then rejected by the clocksource watchdog: the TSC alone.
    let watchdog = profile_path("tsc_watchdog");
    assert_eq!(run_service(&dir, &textfile, &["--profile", &watchdog]), 2);
    let expected = [("VdsotimeTscMarkedUnstable".to_string(), String::new())];
    let alerts = wait_for("the watchdog host's one alert", LIMIT, &mut prom, || {
        get(prom_port, "/api/v1/alerts").filter(|b| firing(b) == expected)
    });
    eprintln!("--- /api/v1/alerts (tsc_watchdog):\n{alerts}");
    drop(prom);
    drop(node);
    std::fs::remove_dir_all(&dir).unwrap();
}
