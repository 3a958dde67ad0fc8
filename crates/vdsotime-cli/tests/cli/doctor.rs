use crate::*;

fn judge(profile: &serde_json::Value, name: &str) -> (i32, String) {
    let d = scratch(name);
    let file = d.join("profile.json");
    std::fs::write(&file, serde_json::to_string(profile).unwrap()).unwrap();
    let (c, out, err) = parts(&run(&["doctor", "--profile", file.to_str().unwrap()]));
    let _ = std::fs::remove_dir_all(d);
    assert!(c == 0 || c == 2, "{out}\n{err}");
    (c, out)
}

/// Makes `p` a machine whose vDSO enters the kernel for every counter clock, as the
/// probe and the timing would both see it.
fn counter_clocks_fall_back(p: &mut serde_json::Value) {
    let counter = |f: &serde_json::Value| {
        let clock = f["clock"].as_str().unwrap_or("");
        (f["function"] == "clock_gettime" && !clock.ends_with("_COARSE"))
            || f["function"] == "gettimeofday"
    };
    for c in p["costs"].as_array_mut().unwrap() {
        if counter(c) {
            let sys = c["syscall_ns"].as_f64().unwrap();
            c["vdsotime_ns"] = (sys * 1.02).into();
        }
    }
    for c in p["probe"]["calls"].as_array_mut().unwrap() {
        if counter(c) {
            c["outcome"] = "syscall".into();
        }
    }
}

/// This machine's profile made healthy by construction.
fn healthy_profile() -> serde_json::Value {
    // The live machine may judge either way; only its shape is reused.
    let (c, out, err) = parts(&run(&["doctor", "--duration", "0.005", "--json"]));
    assert!(c == 0 || c == 2, "{err}");
    let real: serde_json::Value = serde_json::from_str(&out).unwrap();
    let mut p = real["profile"].clone();
    p["has_vdso"] = true.into();
    p["missing_symbols"] = serde_json::json!([]);
    p["facts"]["machine"] = "x86_64".into();
    p["facts"]["clocksource"] = "tsc".into();
    p["facts"]["clocksources_available"] = serde_json::json!(["tsc", "hpet", "acpi_pm"]);
    p["facts"]["cpu_flags"]["known"] = true.into();
    p["facts"]["cpu_flags"]["constant_tsc"] = true.into();
    p["facts"]["cpu_flags"]["nonstop_tsc"] = true.into();
    p["facts"]["tsc_marked_unstable"] = false.into();
    for c in p["costs"].as_array_mut().unwrap() {
        let sys = c["syscall_ns"].as_f64().unwrap();
        c["vdsotime_ns"] = (sys / 10.0).into();
        c["libc_ns"] = (sys / 9.0).into();
        c["route"] = "__vdso_simulated@LINUX_2.6".into();
    }
    p
}

#[test]
fn doctor_json_is_consistent_with_exit_status() {
    let o = run(&["doctor", "--duration", "0.01", "--json"]);
    let (c, out, err) = parts(&o);
    assert!(c == 0 || c == 2, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let status = v["verdict"]["status"].as_str().unwrap();
    assert_eq!(status == "degraded", c == 2);
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
    assert_eq!(v["schema_version"], 1);
    let findings = v["verdict"]["findings"].as_array().unwrap();
    for f in findings {
        assert!(f["code"].is_string() && f["message"].is_string(), "{f}");
        assert!(f["subject"].is_object(), "{f}");
    }
    let paths = v["paths"].as_array().unwrap();
    assert!(paths.len() >= 10, "{paths:?}");
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

#[test]
fn simulated_healthy_profile_is_healthy() {
    let (c, out) = judge(&healthy_profile(), "healthy");
    assert_eq!(c, 0, "{out}");
    assert!(out.contains("HEALTHY"));
}

#[test]
fn simulated_fallback_profile_is_degraded() {
    let mut p = healthy_profile();
    counter_clocks_fall_back(&mut p);
    p["facts"]["clocksource"] = "mystery".into();
    let (c, out) = judge(&p, "fallback");
    assert_eq!(c, 2, "{out}");
    assert!(out.contains("DEGRADED"));
    assert!(
        out.contains("clock_gettime(MONOTONIC) enters the kernel inside the vDSO"),
        "{out}"
    );
}

#[test]
fn simulated_hpet_gets_switch_advice() {
    let mut p = healthy_profile();
    p["facts"]["clocksource"] = "hpet".into();
    counter_clocks_fall_back(&mut p);
    let (c, out) = judge(&p, "hpet");
    assert_eq!(c, 2, "{out}");
    assert!(
        out.contains("echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource"),
        "{out}"
    );
    assert!(out.contains("clocksource=tsc"));
}

#[test]
fn simulated_libc_syscall_is_reported() {
    let mut p = healthy_profile();
    for c in p["costs"].as_array_mut().unwrap() {
        let sys = c["syscall_ns"].as_f64().unwrap();
        c["libc_ns"] = sys.into();
    }
    let (c, out) = judge(&p, "libc");
    assert_eq!(c, 0, "{out}");
    assert!(
        out.contains("Your C library makes a system call for gettimeofday()"),
        "{out}"
    );
}

#[test]
fn bad_profile_is_an_error() {
    let d = scratch("badprofile");
    let file = d.join("p.json");
    std::fs::write(&file, "{\"nope\": 1}").unwrap();
    let (c, _, err) = parts(&run(&["doctor", "--profile", file.to_str().unwrap()]));
    assert_eq!(c, 1);
    assert!(err.contains("not a doctor profile"), "{err}");
    let _ = std::fs::remove_dir_all(d);
}
