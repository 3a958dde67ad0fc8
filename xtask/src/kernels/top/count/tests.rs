use super::*;

fn output(backend: &str, rows: &str, lost: u32) -> Vec<String> {
    let mut lines = vec![
        format!("holding {backend} after 2.0 s"),
        "perf rings: 2 of 2112, 2112 KiB; page 64 KiB".to_string(),
        "counted 77 2000".to_string(),
    ];
    let doc = format!(
        r#"{{"backend": "{backend}", "backend_reason": null, "lost_samples": {lost},
        "rows": [{rows}]}}"#
    );
    lines.extend(doc.lines().map(str::to_string));
    lines
}

fn row(pid: u32, clock: &str, calls: u64) -> String {
    format!(
        r#"{{"pid": {pid}, "comm": "vm-syscalls", "syscall": "clock_gettime",
        "clock": "{clock}", "calls": {calls}}}"#
    )
}

/// `judge` of a native count asked for and expected by the same `backend`.
fn native(backend: &'static str, lines: &[String], exit: i32) -> Result<String, Vec<String>> {
    judge(
        backend,
        Want::Count(backend),
        Counted::Native,
        lines,
        Some(exit),
    )
}

#[test]
fn an_exact_count_passes_and_says_so() {
    let lines = output(
        "perf",
        &format!(
            "{},{}",
            row(77, "CLOCK_MONOTONIC", 2000),
            row(1, "CLOCK_REALTIME", 5)
        ),
        0,
    );
    let said = judge(
        "perf",
        Want::Count("perf"),
        Counted::Native,
        &lines,
        Some(0),
    )
    .expect("exact");
    assert!(said.contains("2000 direct calls counted exactly"), "{said}");
}

#[test]
fn one_call_missing_or_extra_fails() {
    for calls in [1999, 2001] {
        let lines = output("perf", &row(77, "CLOCK_MONOTONIC", calls), 0);
        let wrong = judge(
            "perf",
            Want::Count("perf"),
            Counted::Native,
            &lines,
            Some(0),
        )
        .expect_err("inexact");
        assert!(wrong[0].contains(&format!("x{calls}")), "{wrong:?}");
    }
}

#[test]
fn the_wrong_clock_backend_losses_or_exit_fail() {
    let lines = output("perf", &row(77, "CLOCK_REALTIME", 2000), 0);
    assert!(native("perf", &lines, 0).is_err());
    let lines = output("perf", &row(77, "CLOCK_MONOTONIC", 2000), 0);
    assert!(native("tracepoint", &lines, 0).is_err());
    assert!(native("perf", &lines, 1).is_err());
    let lines = output("perf", &row(77, "CLOCK_MONOTONIC", 2000), 3);
    assert!(native("perf", &lines, 0).is_err());
}

#[test]
fn perf_rings_sized_in_pages_fail() {
    let mut lines = output("perf", &row(77, "CLOCK_MONOTONIC", 2000), 0);
    let said = judge(
        "perf",
        Want::Count("perf"),
        Counted::Native,
        &lines,
        Some(0),
    )
    .expect("rings of 2 MiB");
    assert!(
        said.contains("perf rings of 2112 KiB, pages of 64 KiB"),
        "{said}"
    );
    lines[1] = "perf rings: 2 of 32832, 32832 KiB; page 64 KiB".to_string();
    let wrong = judge(
        "perf",
        Want::Count("perf"),
        Counted::Native,
        &lines,
        Some(0),
    )
    .expect_err("rings of 32 MiB");
    assert!(wrong[0].contains("32832 KiB"), "{wrong:?}");
    lines.remove(1);
    assert!(native("perf", &lines, 0).is_err());
}

#[test]
fn no_count_or_no_document_fails() {
    let lines = vec!["vm-top-count: /bin/vdsotime exited".to_string()];
    assert!(native("perf", &lines, 1).is_err());
    let lines = vec!["counted 77 2000".to_string()];
    assert!(native("perf", &lines, 0).is_err());
}

#[test]
fn the_help_states_the_count() {
    let help = crate::kernels::USAGE.replace('\n', " ");
    assert!(help.contains(&format!("exactly {CALLS} direct")), "{help}");
}

#[test]
fn thirty_two_bit_tools_and_the_tinyconfig_kernel_count_with_what_they_have() {
    for m in crate::kernels::machines::ALL {
        let b = backends(m);
        let debian = m.source_config.is_none();
        assert_eq!(
            b.contains(&"perf") && b.contains(&"auto"),
            debian,
            "{}",
            m.name
        );
        let bpf = debian && !BITS_32.contains(&m.arch);
        assert_eq!(
            b.contains(&"tracepoint") && b.contains(&"fentry"),
            bpf,
            "{}",
            m.name
        );
    }
}

#[test]
fn x86_64_debian_kernels_also_count_an_i386_process() {
    for m in crate::kernels::machines::ALL {
        let want = m.arch == "x86_64" && m.source_config.is_none();
        assert_eq!(compat_triple(m).is_some(), want, "{}", m.name);
    }
    let (_, _, native) = run("perf", Counted::Native);
    let want = "/bin/vm-top-count perf 2000 /bin/vdsotime top --once --duration 120 --format json --backend perf";
    assert_eq!(native.join(" "), want);
    let (label, _, argv) = run("perf", Counted::I386);
    assert_eq!(label, "top-count32-perf");
    assert_eq!(argv[1..3], ["--counted", I386_PROGRAM]);
    assert!(is_label(&label) && is_label(&run("auto", Counted::Native).0));
    let lines = output("perf", &row(77, "CLOCK_MONOTONIC", 2000), 0);
    let said = judge("perf", Want::Count("perf"), Counted::I386, &lines, Some(0));
    assert!(said
        .expect("exact")
        .contains("a 32-bit (i386) process's 2000"));
}

#[test]
fn each_machine_expects_fentry_where_its_kernel_has_trampolines_and_says_so() {
    assert_eq!(
        want("auto", "x86_64", "6.12.57+deb13-amd64"),
        Want::Count("fentry")
    );
    assert_eq!(
        want("auto", "aarch64", "6.1.0-50-arm64"),
        Want::Count("tracepoint")
    );
    assert_eq!(want("fentry", "aarch64", "6.1.0-50-arm64"), Want::Refused);
    assert_eq!(
        want("auto", "aarch64", "6.12.48+deb13-arm64"),
        Want::Count("fentry")
    );
    assert_eq!(
        want("auto", "i686", "6.1.0-50-686-pae"),
        Want::Count("perf")
    );
    assert_eq!(
        want("auto", "powerpc64le", "6.12.48+deb13-powerpc64le"),
        Want::Count("tracepoint")
    );
    assert_eq!(want("perf", "s390x", "6.1.0-50-s390x"), Want::Count("perf"));
    assert_eq!(want("fentry", "s390x", "garbage"), Want::Refused);
    assert_eq!(
        want("auto", "s390x", "7.2.13+deb14-s390x"),
        Want::Count("tracepoint")
    );
    assert_eq!(
        want("auto", "powerpc64le", "7.2.13+deb14-powerpc64le"),
        Want::Count("fentry")
    );
}

#[test]
fn auto_must_say_why_it_fell_back_and_a_refusal_must_give_its_reason() {
    let mut lines = output("tracepoint", &row(77, "CLOCK_MONOTONIC", 2000), 0);
    let no_reason = judge(
        "auto",
        Want::Count("tracepoint"),
        Counted::Native,
        &lines,
        Some(0),
    );
    assert!(no_reason.expect_err("no reason")[0].contains("without saying why"));
    let at = lines
        .iter()
        .position(|l| l.contains("backend_reason"))
        .expect("the reason");
    lines[at] = lines[at].replace("null", "\"fentry: the kernel refused to attach\"");
    let said = judge(
        "auto",
        Want::Count("tracepoint"),
        Counted::Native,
        &lines,
        Some(0),
    )
    .expect("fell back");
    assert!(
        said.contains("chose tracepoint (fentry: the kernel refused"),
        "{said}"
    );
    let refusal = vec![
        "vdsotime top: measuring what a system call and a vDSO call cost here...".to_string(),
        "vdsotime: cannot trace system calls: the kernel refused to attach to __arm64_sys_time (fentry needs Linux 6.4 or later on aarch64)".to_string(),
    ];
    let said = judge("fentry", Want::Refused, Counted::Native, &refusal, Some(1)).expect("refused");
    assert!(
        said.contains("refused as this kernel requires (exit 1)"),
        "{said}"
    );
    assert!(judge("fentry", Want::Refused, Counted::Native, &refusal, Some(0)).is_err());
    assert!(judge(
        "fentry",
        Want::Refused,
        Counted::Native,
        &refusal[..1],
        Some(1)
    )
    .is_err());
    let counted = output("fentry", &row(77, "CLOCK_MONOTONIC", 2000), 0);
    assert!(judge("fentry", Want::Refused, Counted::Native, &counted, Some(0)).is_err());
}

#[test]
fn the_bpf_counters_by_name_count_without_syscall_tracepoints_and_say_so() {
    for backend in ["fentry", "tracepoint"] {
        let (_, _, argv) = run(backend, Counted::Native);
        assert!(
            argv.iter().any(|a| a == "--without-tracepoints"),
            "{argv:?}"
        );
        let mut lines = output(backend, &row(77, "CLOCK_MONOTONIC", 2000), 0);
        let wrong = native(backend, &lines, 0).expect_err("not run without them");
        assert!(wrong[0].contains("was not run without them"), "{wrong:?}");
        lines.insert(0, format!("{WITHOUT_TRACEPOINTS}/tmp/t"));
        let said = native(backend, &lines, 0).expect("exact");
        assert!(said.contains("without syscall tracepoints"), "{said}");
    }
    // perf needs the tracepoint; auto is judged where the kernel's tracefs is whole.
    for backend in ["perf", "auto"] {
        let (_, _, argv) = run(backend, Counted::Native);
        assert!(
            !argv.iter().any(|a| a == "--without-tracepoints"),
            "{argv:?}"
        );
    }
}

#[test]
fn the_interval_is_only_a_bound_which_the_init_ends() {
    let (_, timeout, argv) = run("perf", Counted::I386);
    let at = argv
        .iter()
        .position(|a| a == "--duration")
        .expect("--duration");
    assert_eq!(argv[at + 1], INTERVAL, "{argv:?}");
    assert_eq!(argv.iter().filter(|a| *a == "--duration").count(), 1);
    assert!(INTERVAL.parse::<u64>().unwrap() < timeout, "{argv:?}");
}
