//! Judging what the guest recorded (xtask/fleet/guest.sh writes one file per observation
//! into the boot's shared directory): one PASS or FAIL line per check, and the figures
//! docs/fleet.md quotes.

use std::fs;
use std::path::Path;

use super::alerts::{self, Alert};
use super::rules;
use super::sandbox;

/// The checks' verdicts, printed as they are made.
#[derive(Debug, Default)]
pub struct Checks {
    pub failed: Vec<String>,
    pub passed: usize,
}

impl Checks {
    pub fn check(&mut self, name: &str, ok: bool, detail: &str) {
        let word = if ok { "PASS" } else { "FAIL" };
        println!("{word} fleet: {name}: {detail}");
        if ok {
            self.passed += 1;
        } else {
            self.failed.push(name.to_string());
        }
    }
}

/// One boot's recorded files.
struct Boot<'a> {
    dir: &'a Path,
}

impl Boot<'_> {
    fn read(&self, name: &str) -> String {
        fs::read_to_string(self.dir.join(name)).unwrap_or_default()
    }

    /// The value of `key=` in a `systemctl show` file, or of `key ` in the facts.
    fn field(&self, file: &str, key: &str) -> String {
        self.read(file)
            .lines()
            .find_map(|l| {
                l.strip_prefix(key)
                    .and_then(|r| r.strip_prefix('=').or_else(|| r.strip_prefix(' ')))
            })
            .unwrap_or("")
            .trim()
            .to_string()
    }

    fn number(&self, file: &str) -> Option<u64> {
        self.read(file).trim().parse().ok()
    }

    fn alerts(&self, file: &str) -> Vec<Alert> {
        alerts::snapshot(&self.read(file)).unwrap_or_default()
    }
}

fn firing(list: &[Alert]) -> Vec<&Alert> {
    list.iter().filter(|a| a.state == "firing").collect()
}

fn show(list: &[&Alert]) -> String {
    if list.is_empty() {
        "none".to_string()
    } else {
        list.iter().map(|a| a.show()).collect::<Vec<_>>().join("; ")
    }
}

/// The samples of a metrics file (not its comments).
fn series(text: &str) -> usize {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .count()
}

/// The boot's timeouts and the guest's durations of its phases.
fn phases(boot: &Boot, name: &str, c: &mut Checks) {
    let text = boot.read("phases");
    let marks: Vec<(f64, &str)> = text
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter_map(|(t, p)| Some((t.parse().ok()?, p)))
        .collect();
    for pair in marks.windows(2) {
        println!(
            "{:6.1} s  {name} boot, in the guest: {}",
            pair[1].0 - pair[0].0,
            pair[0].1
        );
    }
    let timeouts = boot.read("timeouts");
    c.check(
        &format!("{name} boot: the guest's script ran to its end without waiting in vain"),
        marks.last().is_some_and(|(_, p)| *p == "end") && timeouts.trim().is_empty(),
        &if timeouts.trim().is_empty() {
            format!("{} phases", marks.len())
        } else {
            format!(
                "timed out waiting for: {}",
                timeouts.trim().replace('\n', "; ")
            )
        },
    );
}

/// The checks every boot makes: systemd as PID 1 on Debian's kernel, the timer's first
/// run, the textfile's mode and owner, node_exporter and Prometheus.
fn common(boot: &Boot, name: &str, release: &str, rules_text: &str, c: &mut Checks) {
    let pid1 = boot.field("facts", "pid1");
    let kernel = boot.field("facts", "kernel");
    c.check(
        &format!("{name} boot: systemd is PID 1 on Debian's trixie kernel"),
        pid1 == "systemd" && kernel == release,
        &format!("PID 1 {pid1:?}, kernel {kernel:?} (the image's {release})"),
    );
    let trigger = boot.field("timer-show", "LastTriggerUSec");
    c.check(
        &format!("{name} boot: the timer started the service"),
        !trigger.is_empty() && trigger != "n/a" && !boot.read("textfile-first.prom").is_empty(),
        &format!("the timer's LastTriggerUSec={trigger}"),
    );
    let stat = boot.read("textfile-stat");
    let mut f = stat.split_whitespace();
    let (mode, user) = (f.next().unwrap_or(""), f.next().unwrap_or(""));
    let passwd = boot.read("owner-passwd");
    c.check(
        &format!("{name} boot: the textfile has mode 0644 and a named owner from /etc/passwd"),
        mode == "644" && !passwd.trim().is_empty() && user != "UNKNOWN",
        &format!(
            "{} (stat: {})",
            boot.read("textfile-ls").trim(),
            stat.trim()
        ),
    );
    let metrics = boot.read("node-metrics");
    c.check(
        &format!("{name} boot: node_exporter serves the file without a scrape error"),
        metrics.lines().any(|l| l == "node_textfile_scrape_error 0")
            && metrics.lines().any(|l| l.starts_with("vdsotime_")),
        &format!(
            "{} vdsotime_ samples in its /metrics",
            metrics
                .lines()
                .filter(|l| l.starts_with("vdsotime_"))
                .count()
        ),
    );
    let loaded = boot.read("rules-loaded");
    let missing: Vec<String> = rules::alerts(rules_text)
        .into_iter()
        .map(|a| a.name)
        .filter(|n| !loaded.lines().any(|l| l.starts_with(&format!("{n}\tok"))))
        .collect();
    c.check(
        &format!("{name} boot: Prometheus scrapes the series with every shipped rule loaded"),
        missing.is_empty() && !loaded.is_empty(),
        &if missing.is_empty() {
            format!("{} rules loaded, healthy", loaded.lines().count())
        } else {
            format!("not loaded or not healthy: {}", missing.join(", "))
        },
    );
}

/// "Exactly one alert fires, the cause": the last snapshot has one firing alert, no other
/// fired while it was sampled, and `is_cause` accepts it.
fn one_cause(boot: &Boot, what: &str, is_cause: impl Fn(&Alert) -> bool, c: &mut Checks) {
    let last = boot.alerts("alerts-degraded");
    let now = firing(&last);
    let ever = alerts::ever_firing(&boot.read("alerts-degraded.samples"));
    println!("fleet: {what}: firing {}", show(&now));
    c.check(
        what,
        now.len() == 1 && ever.len() == 1 && is_cause(now[0]),
        &format!(
            "firing at the end: {}; fired while sampled: {}",
            now.len(),
            ever.into_iter().collect::<Vec<_>>().join(", ")
        ),
    );
}

/// The main boot: a healthy host, the clocksource switched and back, the unit, the
/// sandbox, the fault.
pub fn main_boot(dir: &Path, release: &str, rules_text: &str, c: &mut Checks) {
    let boot = Boot { dir };
    phases(&boot, "main", c);
    common(&boot, "main", release, rules_text, c);
    let n = series(&boot.read("textfile-first.prom"));
    c.check(
        "the textfile has at most 40 series",
        n > 0 && n <= 40,
        &format!("{n} series"),
    );
    let healthy = boot.alerts("alerts-healthy");
    let samples = boot.read("alerts-healthy.samples");
    let ever = alerts::ever_firing(&samples);
    c.check(
        "a healthy host fires no alert",
        !samples.is_empty() && firing(&healthy).is_empty() && ever.is_empty(),
        &format!("alerts: {}", show(&healthy.iter().collect::<Vec<_>>())),
    );

    let switch = boot.read("switch");
    let to = switch.split_whitespace().nth(3).unwrap_or("").to_string();
    println!("fleet: clocksource switched {}", switch.trim());
    let journal = boot.read("journal");
    let (switched, seen) = (boot.number("switch-time"), boot.number("degraded-time"));
    let next = switched.and_then(|t| next_run_end(&journal, t as f64));
    c.check(
        "the next timer run after the switch says degraded",
        matches!((next, seen), (Some(end), Some(seen)) if seen as f64 <= end + POLL_SLACK)
            && boot
                .read("textfile-degraded.prom")
                .lines()
                .any(|l| l == "vdsotime_doctor_healthy 0"),
        &format!(
            "vdsotime_doctor_healthy 0 seen {} s after the switch; the first run started after it ended {} s after it",
            seen.zip(switched).map_or("-".into(), |(d, s)| d.saturating_sub(s).to_string()),
            next.zip(switched).map_or("-".into(), |(e, s)| format!("{:.0}", e - s as f64)),
        ),
    );
    one_cause(
        &boot,
        &format!("switched to {to}: exactly one alert fires, the cause, naming the clocksource"),
        |a| !to.is_empty() && a.label("clocksource") == to,
        c,
    );
    let after = boot.alerts("alerts-after");
    c.check(
        "switching back resolves it",
        boot.number("healthy-time").is_some()
            && !boot.read("alerts-after.samples").is_empty()
            && after.is_empty(),
        &format!("alerts after: {}", show(&after.iter().collect::<Vec<_>>())),
    );

    let result = boot.field("service-show", "Result");
    let restarts = boot.field("service-show", "NRestarts");
    c.check(
        "systemctl show -p Result is success",
        result == "success",
        &format!(
            "Result={result} NRestarts={restarts} ExecMainStatus={}",
            boot.field("service-show", "ExecMainStatus")
        ),
    );
    let runs = journal
        .lines()
        .filter(|l| l.contains("Finished vdsotime-doctor.service"))
        .count();
    let failures: Vec<&str> = journal
        .lines()
        .filter(|l| l.contains("Failed with result") || l.contains("Failed to start"))
        .collect();
    c.check(
        "the journal shows the runs succeeded",
        runs >= 3 && failures.is_empty(),
        &format!("{runs} runs finished, {} failed", failures.len()),
    );
    security(&boot, c);
    sandboxed(&boot, c);

    let show_fault = boot.read("fault-show");
    let fault_journal = boot.read("fault-journal");
    c.check(
        "a missing textfile directory: the condition skips the run and the journal says so",
        show_fault.lines().any(|l| l == "ConditionResult=no")
            && fault_journal.contains("skipped")
            && fault_journal.contains("ConditionPathIsDirectory"),
        &format!(
            "directory {:?}; journal: {}",
            boot.read("fault-dir").trim(),
            fault_journal.trim().replace('\n', " | ")
        ),
    );
}

/// How long after a run's end the guest may see its file (it looks every 2 s, and the
/// journal's time and the script's differ by the time a command takes to start).
const POLL_SLACK: f64 = 10.0;

/// When the first run of the doctor that started after `after` ended (epoch seconds), from
/// the unit's journal (`journalctl -o short-unix`).
fn next_run_end(journal: &str, after: f64) -> Option<f64> {
    let at = |l: &str| l.split_whitespace().next()?.parse::<f64>().ok();
    let start = journal
        .lines()
        .filter(|l| l.contains("Starting vdsotime-doctor.service"))
        .filter_map(at)
        .find(|t| *t > after)?;
    journal
        .lines()
        .filter(|l| l.contains("Finished vdsotime-doctor.service"))
        .filter_map(at)
        .find(|t| *t > start)
}

/// `systemd-analyze security`'s overall exposure, which must be at most 1.5.
fn security(boot: &Boot, c: &mut Checks) {
    let text = boot.read("security");
    let line = text
        .lines()
        .find(|l| l.contains("Overall exposure level"))
        .unwrap_or("");
    let score: Option<f64> = line
        .split(':')
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|s| s.parse().ok());
    c.check(
        "systemd-analyze security vdsotime-doctor.service is at most 1.5",
        score.is_some_and(|s| s <= 1.5),
        line.trim_start_matches(['→', ' ']),
    );
}

/// The sandbox's claims: no read of /etc/shadow or the SSH host key, no network, no write
/// outside its one path; each probe succeeding outside the sandbox.
fn sandboxed(boot: &Boot, c: &mut Checks) {
    let control = sandbox::outcomes(&boot.read("probe-control"));
    let inside = sandbox::outcomes(&boot.read("probe-sandboxed"));
    for real in &control {
        let inside_it = inside
            .iter()
            .find(|o| o.probe == real.probe && o.target == real.target);
        let kept = inside_it.map(|o| sandbox::kept_from(o, real));
        c.check(
            &format!("the sandbox: cannot {} {}", real.probe, real.target),
            real.got.is_some() && kept == Some(true),
            &format!(
                "outside the sandbox: {}; inside: {}",
                if real.got.is_some() {
                    "ok"
                } else {
                    "denied (the probe proves nothing)"
                },
                match (kept, inside_it.and_then(|o| o.got.as_ref())) {
                    (Some(true), None) => "denied",
                    (Some(true), Some(_)) => "read other bytes (a hidden file)",
                    (Some(false), _) => "ALLOWED",
                    (None, _) => "not run",
                }
            ),
        );
    }
    let has_key = control
        .iter()
        .any(|o| o.probe == "read" && o.target.starts_with("/etc/ssh/ssh_host_"));
    c.check(
        "the sandbox probes include an SSH host key",
        has_key,
        "from /etc/ssh/ssh_host_*_key",
    );
    let allowed = sandbox::allowed(&boot.read("service-show"));
    let writable = sandbox::writable(&boot.read("probe-sandboxed"));
    let outside: Vec<&String> = writable
        .iter()
        .filter(|d| !sandbox::inside(d, &allowed))
        .collect();
    c.check(
        "the sandbox: no write outside its own path",
        !boot.read("probe-sandboxed").is_empty() && outside.is_empty(),
        &format!(
            "writable: {}; allowed by the unit: {}{}",
            writable.join(" "),
            allowed.join(" "),
            if outside.is_empty() {
                String::new()
            } else {
                format!(
                    "; OUTSIDE: {}",
                    outside
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(" ")
                )
            }
        ),
    );
}

/// The boot with `tsc=unstable`: exactly one alert, the one whose rule reads the TSC finding.
pub fn tsc_boot(dir: &Path, release: &str, rules_text: &str, c: &mut Checks) {
    let boot = Boot { dir };
    phases(&boot, "tsc-unstable", c);
    common(&boot, "tsc-unstable", release, rules_text, c);
    println!(
        "fleet: tsc=unstable boot: clocksource {}",
        boot.field("facts", "clocksource")
    );
    let tsc: Vec<String> = rules::alerts(rules_text)
        .into_iter()
        .filter(|a| a.expr.contains("tsc_marked_unstable"))
        .map(|a| a.name)
        .collect();
    one_cause(
        &boot,
        "tsc=unstable: exactly one alert fires, naming that cause",
        |a| tsc.contains(&a.name),
        c,
    );
}

/// The figures docs/fleet.md quotes, from the main boot.
pub fn figures(dir: &Path) {
    let boot = Boot { dir };
    println!("\n== for docs/fleet.md (\"On a real host\")");
    println!("ls -l: {}", boot.read("textfile-ls").trim());
    println!(
        "series in the textfile: {}",
        series(&boot.read("textfile-first.prom"))
    );
    let sec = boot.read("security");
    println!(
        "{}",
        sec.lines()
            .find(|l| l.contains("Overall exposure"))
            .unwrap_or("no exposure score")
    );
    for (when, file) in [
        ("before the switch", "alerts-healthy"),
        ("after the switch", "alerts-degraded"),
        ("switched back", "alerts-after"),
    ] {
        let list = boot.alerts(file);
        println!("alerts {when}: {}", show(&list.iter().collect::<Vec<_>>()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_run_is_the_first_started_after_the_switch() {
        let journal = "100.5 fleet systemd[1]: Starting vdsotime-doctor.service - d...\n\
                       130.0 fleet systemd[1]: Finished vdsotime-doctor.service - d.\n\
                       160.0 fleet systemd[1]: Starting vdsotime-doctor.service - d...\n\
                       190.2 fleet systemd[1]: Finished vdsotime-doctor.service - d.\n";
        assert_eq!(next_run_end(journal, 120.0), Some(190.2));
        assert_eq!(next_run_end(journal, 90.0), Some(130.0));
        assert_eq!(next_run_end(journal, 170.0), None);
        assert_eq!(series("# HELP a\na 1\n\nb{x=\"y\"} 2\n"), 2);
    }
}
