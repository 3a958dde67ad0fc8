//! Trap 7 of vdso-facts.md: inside a time namespace MONOTONIC and BOOTTIME carry
//! offsets that only the kernel's vDSO code and the syscall apply. `check` must
//! still pass there, and `info`/`doctor` must see the offsets.

use std::process::Command;

use crate::*;

/// Runs vdsotime inside `unshare --time` with a one-day offset; `None`, after a visible
/// skip of `test`, where this machine cannot make a time namespace (no privilege, kernel
/// before 5.6, no util-linux `unshare`).
fn in_timens(test: &str, args: &[&str]) -> Option<(i32, String, String)> {
    let o = process::run(
        Command::new("unshare")
            .args([
                "--time",
                "--fork",
                "--monotonic",
                "86400",
                "--boottime",
                "86400",
            ])
            .arg(env!("CARGO_BIN_EXE_vdsotime"))
            .args(args)
            .env_remove("VDSOTIME_FAULT"),
        LIMIT,
    );
    let why = match o {
        Err(process::Error::Spawn(e)) => format!("cannot run unshare: {e}"),
        Err(hung) => panic!("{hung}"),
        Ok(o) => {
            let p = parts(&o);
            if !p.2.starts_with("unshare:") {
                return Some(p);
            }
            format!("cannot create a time namespace here: {}", p.2.trim())
        }
    };
    skip::skip(test, "timens", why);
    None
}

#[test]
fn check_passes_inside_a_time_namespace() {
    const TEST: &str = "check_passes_inside_a_time_namespace";
    let Some((c, out, err)) = in_timens(TEST, &["check", "--duration", "0.3", "--json"]) else {
        return;
    };
    assert_eq!(c, 0, "{out}\n{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["passed"], true);
}

#[test]
fn info_and_doctor_see_the_offsets() {
    const TEST: &str = "info_and_doctor_see_the_offsets";
    let Some((c, out, err)) = in_timens(TEST, &["info", "--json"]) else {
        return;
    };
    assert_eq!(c, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let offsets = v["system"]["timens_offsets"].as_array().unwrap();
    assert!(
        offsets
            .iter()
            .any(|o| o["clock"] == "monotonic" && o["secs"] == 86400),
        "{offsets:?}"
    );
    let Some((c, out, err)) = in_timens(TEST, &["doctor", "--duration", "0.005"]) else {
        return;
    };
    assert!(c == 0 || c == 2, "{err}");
    assert!(
        out.contains("time namespace (monotonic 86400s 0ns, boottime 86400s 0ns)"),
        "{out}"
    );
}

/// Inside a time namespace the vDSO still answers MONOTONIC and BOOTTIME itself (from
/// the namespace's data page): where the clocksource is one it reads, the proof must
/// say so and the verdict must be healthy.
#[test]
fn doctor_proves_the_vdso_inside_a_time_namespace() {
    const TEST: &str = "doctor_proves_the_vdso_inside_a_time_namespace";
    let Some((c, out, err)) = in_timens(TEST, &["doctor", "--duration", "0.005", "--json"]) else {
        return;
    };
    let v: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    let codes: Vec<&str> = v["verdict"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"time_namespace"), "{codes:?}");
    let cs = v["profile"]["facts"]["clocksource"].as_str().unwrap_or("");
    if v["profile"]["probe"]["method"] != "seccomp" || !(cs == "tsc" || cs == "arch_sys_counter") {
        return skip::skip(
            TEST,
            "seccomp",
            format!(
                "no proof here (clocksource {cs:?}, probe {})",
                v["profile"]["probe"]["method"]
            ),
        );
    }
    assert_eq!(c, 0, "{out}");
    for clock in ["MONOTONIC", "BOOTTIME", "REALTIME"] {
        let p = v["paths"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["function"] == "clock_gettime" && p["clock"] == clock)
            .unwrap();
        assert_eq!(
            (&p["path"], &p["method"]),
            (&"vdso".into(), &"seccomp".into()),
            "{p}"
        );
    }
}
