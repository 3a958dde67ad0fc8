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
    let findings = v["verdict"]["findings"].as_array().unwrap();
    assert!(findings.iter().any(|f| f["message"]
        .as_str()
        .unwrap()
        .contains("clock_gettime(MONOTONIC)")));
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
    for c in p["costs"].as_array_mut().unwrap() {
        let sys = c["syscall_ns"].as_f64().unwrap();
        c["vdsotime_ns"] = (sys * 1.02).into();
    }
    let (c, out) = judge(&p, "fallback");
    assert_eq!(c, 2, "{out}");
    assert!(out.contains("DEGRADED"));
    assert!(
        out.contains(
            "clock_gettime(MONOTONIC) goes through the vDSO but costs as much as a system call"
        ),
        "{out}"
    );
}

#[test]
fn simulated_hpet_gets_switch_advice() {
    let mut p = healthy_profile();
    p["facts"]["clocksource"] = "hpet".into();
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
