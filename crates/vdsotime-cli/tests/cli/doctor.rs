use crate::*;

/// A saved scenario profile (tests/profiles), by name.
pub fn profile_path(name: &str) -> String {
    format!("{}/tests/profiles/{name}.json", env!("CARGO_MANIFEST_DIR"))
}

/// `doctor --profile <scenario>` with `extra` arguments: exit code and stdout.
pub fn judge(name: &str, extra: &[&str]) -> (i32, String) {
    let path = profile_path(name);
    let mut args = vec!["doctor", "--profile", path.as_str()];
    args.extend_from_slice(extra);
    let (c, out, err) = parts(&run(&args));
    assert!(err.is_empty(), "{name}: {err}");
    (c, out)
}

#[test]
fn doctor_json_is_consistent_with_exit_status() {
    let o = run(&["doctor", "--duration", "0.01", "--json"]);
    let (c, out, err) = parts(&o);
    assert!(c == 0 || c == 2, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let status = v["verdict"]["status"].as_str().unwrap();
    assert_eq!(status == "degraded", c == 2);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["judged"]["source"], "this_machine", "{out}");
    assert!(v["judged"].get("file").is_none(), "{out}");
    assert_eq!(
        v["judged"]["kernel_release"],
        v["profile"]["facts"]["kernel_release"]
    );
    let costs = v["profile"]["costs"].as_array().unwrap();
    assert_eq!(
        costs.len(),
        10,
        "7 vDSO clocks + gettimeofday, time, getcpu"
    );
    for cost in costs {
        positive(&cost["vdsotime_ns"], "vdsotime_ns");
        positive(&cost["syscall_ns"], "syscall_ns");
        positive(&cost["libc_ns"], "libc_ns");
    }
    for f in v["verdict"]["findings"].as_array().unwrap() {
        assert!(f["code"].is_string() && f["message"].is_string(), "{f}");
        assert!(f["subject"].is_object(), "{f}");
    }
    let paths = v["paths"].as_array().unwrap();
    assert_eq!(paths.len(), 18, "10 timed + 7 clock_getres + getrandom");
    for p in paths {
        let path = p["path"].as_str().unwrap();
        assert!(
            ["vdso", "vdso-fallback", "no-vdso", "syscall", "rseq"].contains(&path),
            "{p}"
        );
        let method = p["method"].as_str().unwrap();
        assert!(["seccomp", "timing", "lookup"].contains(&method), "{p}");
    }
}

/// The proof on this real machine: where the clocksource is tsc (or the arm64
/// counter), every counter clock must come out `vdso`, proved under seccomp.
#[test]
fn this_machine_every_counter_clock_is_proved_vdso() {
    const TEST: &str = "this_machine_every_counter_clock_is_proved_vdso";
    let v = json(&["doctor", "--duration", "0.005"], 0);
    let cs = v["profile"]["facts"]["clocksource"].as_str().unwrap_or("");
    if !v["profile"]["has_vdso"].as_bool().unwrap() {
        return skip::skip(TEST, "vdso", "this process has no vDSO");
    }
    if v["profile"]["probe"]["method"] != "seccomp" {
        return skip::skip(
            TEST,
            "seccomp",
            format!("{}", v["profile"]["probe"]["unavailable"]),
        );
    }
    if cs != "tsc" && cs != "arch_sys_counter" {
        return skip::skip(TEST, "vdso", format!("the clocksource is {cs:?}"));
    }
    for p in v["paths"].as_array().unwrap() {
        if p["function"] == "clock_gettime" || p["function"] == "gettimeofday" {
            assert_eq!(
                (&p["path"], &p["method"]),
                (&"vdso".into(), &"seccomp".into()),
                "{p}"
            );
        }
    }
    assert_eq!(v["verdict"]["status"], "healthy");
}

/// The first finding is what `vdsotime doctor --json | jq '.verdict.findings[0].code'`
/// (the example in `doctor --help`) shows: the cause on a degraded machine, the verdict's
/// evidence on a healthy one; the circumstances (`virtual_machine`: every scenario is a
/// virtual machine but one) come last.
#[test]
fn scenarios_exit_with_their_verdict_and_cause_first() {
    for (name, code, first, role) in [
        ("healthy", 0, "vdso_serves_all", "context"),
        ("time_namespace", 0, "vdso_serves_all", "context"),
        ("hpet", 2, "clocksource_not_vdso_capable", "cause"),
        ("acpi_pm", 2, "clocksource_not_vdso_capable", "cause"),
        ("tsc_unstable", 2, "tsc_marked_unstable", "cause"),
        ("tsc_watchdog", 2, "tsc_marked_unstable", "cause"),
        ("no_vdso", 2, "no_vdso", "cause"),
        ("aux_served", 0, "vdso_serves_all", "context"),
        ("aux_not_served", 0, "vdso_lacks_aux_clocks", "cause"),
    ] {
        let (c, out) = judge(name, &["--json"]);
        assert_eq!(c, code, "{name}: {out}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let findings = v["verdict"]["findings"].as_array().unwrap();
        assert_eq!(findings[0]["code"], first, "{name}: {out}");
        assert_eq!(findings[0]["role"], role, "{name}");
        let vm = findings.iter().position(|f| f["code"] == "virtual_machine");
        let later = |i: usize| findings[i + 1..].iter().all(|f| f["severity"] == "note");
        assert!(
            vm.is_none_or(later),
            "{name}: only notes after virtual_machine: {out}"
        );
        assert_eq!(vm.is_some(), name != "tsc_watchdog", "{name}: {out}");
        let (c, text) = judge(name, &[]);
        assert_eq!(c, code, "{name}");
        let head = if code == 0 { "HEALTHY" } else { "DEGRADED" };
        let verdict = text.lines().nth(1).unwrap_or_default();
        assert!(
            verdict.starts_with(&format!("doctor verdict: {head}")),
            "{text}"
        );
    }
}

/// Judging a saved profile says so first, naming the file and the kernel it was taken
/// on, in the text and in the JSON, so nobody reads it as this machine's verdict.
#[test]
fn a_saved_profile_is_named_first_with_its_kernel() {
    let path = profile_path("hpet");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let kernel = saved["profile"]["facts"]["kernel_release"]
        .as_str()
        .unwrap();
    let (_, text) = judge("hpet", &[]);
    let first = text.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        format!("doctor: judging the saved profile {path}, taken on Linux {kernel} (x86_64), not this machine: every finding below is about that machine."),
    );
    assert!(
        text.lines()
            .nth(1)
            .unwrap_or_default()
            .contains("than the profiled machine allows"),
        "{text}"
    );
    let (_, out) = judge("hpet", &["--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["judged"],
        serde_json::json!({
            "source": "saved_profile",
            "file": path,
            "kernel_release": kernel,
            "machine": "x86_64",
        })
    );
    let (_, metrics) = judge("hpet", &["--format", "prometheus"]);
    assert_eq!(metrics.lines().next(), Some(format!("# {first}").as_str()));
}

/// A profile saved before the probe and the newer facts existed is still judged, by
/// timing, and says so.
#[test]
fn profiles_saved_without_the_probe_are_judged_by_timing() {
    let text = std::fs::read_to_string(profile_path("hpet")).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let p = doc["profile"].as_object_mut().unwrap();
    p.remove("probe");
    let facts = p["facts"].as_object_mut().unwrap();
    for newer in ["tsc_unstable_reason", "kernel_cmdline", "emulator"] {
        facts.remove(newer);
    }
    facts["cpu_flags"].as_object_mut().unwrap().remove("tsc");
    let d = scratch("oldprofile");
    let file = d.join("old.json");
    std::fs::write(&file, serde_json::to_string(&doc).unwrap()).unwrap();
    let v = json(&["doctor", "--profile", file.to_str().unwrap()], 2);
    let _ = std::fs::remove_dir_all(d);
    let findings = v["verdict"]["findings"].as_array().unwrap();
    assert_eq!(findings[0]["code"], "clocksource_not_vdso_capable");
    assert!(findings[0]["message"]
        .as_str()
        .unwrap()
        .contains("(judged by timing)"));
    assert!(findings.iter().any(|f| f["code"] == "seccomp_unavailable"));
    let monotonic = v["paths"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["clock"] == "MONOTONIC")
        .unwrap()
        .clone();
    assert_eq!(
        (&monotonic["path"], &monotonic["method"]),
        (&"vdso-fallback".into(), &"timing".into())
    );
}

#[test]
fn hpet_text_names_hpet_and_the_fix_first() {
    let (c, out) = judge("hpet", &[]);
    assert_eq!(c, 2);
    let first = out.lines().nth(2).unwrap();
    assert!(
        first.contains("DEGRADED [clocksource_not_vdso_capable] The clocksource is hpet"),
        "{out}"
    );
    assert!(
        first.contains(
            "echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource"
        ),
        "{out}"
    );
    assert!(first.contains("`clocksource=tsc`"), "{out}");
}

#[test]
fn bad_profile_is_a_runtime_error() {
    let d = scratch("badprofile");
    let file = d.join("p.json");
    std::fs::write(&file, "{\"nope\": 1}").unwrap();
    let (c, _, err) = parts(&run(&["doctor", "--profile", file.to_str().unwrap()]));
    assert_eq!(c, 1);
    assert!(err.contains("not a doctor profile"), "{err}");
    let (c, _, err) = parts(&run(&[
        "doctor",
        "--profile",
        d.join("missing.json").to_str().unwrap(),
    ]));
    assert_eq!(c, 1, "{err}");
    let _ = std::fs::remove_dir_all(d);
}

/// valgrind runs its guest without a vDSO: the doctor must say so once, name valgrind,
/// and say nothing false.
#[test]
fn under_valgrind_the_doctor_names_the_missing_vdso() {
    const TEST: &str = "under_valgrind_the_doctor_names_the_missing_vdso";
    let o = std::process::Command::new("valgrind")
        .args(["-q", "--error-exitcode=99", env!("CARGO_BIN_EXE_vdsotime")])
        .args(["doctor", "--json", "--duration", "0.005"])
        .env_remove("VDSOTIME_FAULT")
        .output();
    let o = match o {
        Ok(o) => o,
        Err(e) => return skip::skip(TEST, "valgrind", format!("cannot run valgrind: {e}")),
    };
    let (c, out, err) = parts(&o);
    assert_eq!(c, 2, "{out}\n{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["profile"]["has_vdso"], false);
    let findings = v["verdict"]["findings"].as_array().unwrap();
    assert_eq!(findings[0]["code"], "no_vdso", "{out}");
    let m = findings[0]["message"].as_str().unwrap();
    assert!(m.contains("Here the process runs under valgrind"), "{m}");
    assert!(m.contains("`vdso=0`"), "{m}");
    let degraded = findings
        .iter()
        .filter(|f| f["severity"] == "degraded")
        .count();
    assert_eq!(degraded, 1, "{out}");
    for f in findings {
        let m = f["message"].as_str().unwrap();
        assert!(
            !m.contains("on this architecture") && !m.contains("served by the vDSO"),
            "{m}"
        );
        assert_ne!(f["severity"], "ok", "{f}");
    }
    for p in v["paths"].as_array().unwrap() {
        assert_eq!(p["path"], "no-vdso", "{p}");
    }
}

/// `vdsotime doctor | head -1` ends quietly (SIGPIPE), without a panic message.
#[test]
fn a_closed_pipe_ends_the_doctor_quietly() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_vdsotime"))
        .args(["doctor", "--profile", &profile_path("hpet")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away before the first line
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!err.contains("panicked"), "{err}");
    assert_ne!(status.code(), Some(101), "{status:?}");
}

/// The doctor run without CAP_SYSLOG, as a cron job or a container runs it: as root, with
/// CAP_SYSLOG dropped from the bounding and inheritable sets (the program then starts
/// without it); as another user, as it is.
fn doctor_without_cap_syslog(args: &[&str]) -> (i32, String, String) {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout == b"0\n");
    let mut c = if root {
        let mut c = Command::new("setpriv");
        c.args(["--inh-caps=-all", "--bounding-set=-syslog", "--"]);
        c.arg(env!("CARGO_BIN_EXE_vdsotime"));
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_vdsotime"))
    };
    c.arg("doctor").args(args).env_remove("VDSOTIME_FAULT");
    parts(&process::output(&mut c, LIMIT))
}

/// Without CAP_SYSLOG, under `kernel.dmesg_restrict=1` (Debian's default), the kernel log
/// is unreadable: the doctor says which check it could not make and how to grant it, as a
/// note, and its metrics say `vdsotime_doctor_check_skipped{check="kernel_log"} 1`.
#[test]
fn without_the_kernel_log_the_doctor_says_the_tsc_check_was_not_made() {
    const TEST: &str = "without_the_kernel_log_the_doctor_says_the_tsc_check_was_not_made";
    if !cfg!(target_arch = "x86_64") {
        skip::skip(
            TEST,
            "x86_64",
            "the kernel log is read for the TSC, on x86 only",
        );
        return;
    }
    let restrict = std::fs::read_to_string("/proc/sys/kernel/dmesg_restrict").unwrap_or_default();
    if restrict.trim() != "1" {
        skip::skip(
            TEST,
            "dmesg_restrict",
            format!("kernel.dmesg_restrict is {restrict:?}: every user may read the kernel log"),
        );
        return;
    }
    let (c, out, err) = doctor_without_cap_syslog(&["--duration", "0.005"]);
    assert!(c == 0 || c == 2, "{c}\n{out}{err}");
    assert!(
        out.contains("note     [kernel_log_unreadable] The kernel log (/dev/kmsg) could not be read, so the check whether the kernel marked the TSC unstable")
            && out.contains("Grant CAP_SYSLOG"),
        "{out}"
    );
    let (_, out, err) =
        doctor_without_cap_syslog(&["--duration", "0.005", "--format", "prometheus"]);
    assert!(
        out.contains("\nvdsotime_doctor_check_skipped{check=\"kernel_log\"} 1\n"),
        "{out}{err}"
    );
    // The same run with the log readable (root with CAP_SYSLOG) says neither.
    if std::fs::File::open("/dev/kmsg").is_ok() {
        let (_, out, _) = parts(&run(&[
            "doctor",
            "--duration",
            "0.005",
            "--format",
            "prometheus",
        ]));
        assert!(
            out.contains("\nvdsotime_doctor_check_skipped{check=\"kernel_log\"} 0\n"),
            "{out}"
        );
        assert!(!out.contains("kernel_log_unreadable"), "{out}");
    }
}

/// A saved profile whose kernel log was unread is judged the same way.
#[test]
fn a_profile_without_the_kernel_log_is_told_so() {
    let (c, out) = judge("kernel_log_unreadable", &[]);
    assert_eq!(c, 0, "{out}");
    assert!(out.contains("[kernel_log_unreadable]"), "{out}");
    let (_, out) = judge("healthy", &[]);
    assert!(!out.contains("kernel_log_unreadable"), "{out}");
}
