use super::*;
use crate::kernels::scenarios::DEFAULT;

fn spec<'a>(arch: &'a str, vdso_getrandom: bool, extra: &'a [String]) -> Spec<'a> {
    Spec {
        scenario: &DEFAULT,
        emulator: "qemu-system-s390x (TCG, system mode)",
        arch,
        per_binary: Duration::from_secs(300),
        extra_skips: extra,
        require: "",
        vdso_getrandom,
        aux_programs: None,
        top_counts: &["perf"],
        compat_init: None,
        overhead: None,
    }
}

fn names_of(list: &[&str]) -> Vec<String> {
    list.iter().map(|n| n.to_string()).collect()
}

#[test]
fn the_bulk_getrandom_tests_run_where_the_vdso_has_getrandom() {
    let all = |s: &Spec| -> Vec<String> {
        skipped(s)
            .into_iter()
            .flat_map(|(names, _)| names)
            .collect()
    };
    let extra = ["x".to_string()];
    let with = all(&spec("powerpc64le", true, &extra));
    assert!(SYSCALL_BULK.iter().all(|n| !with.iter().any(|w| w == n)));
    assert!(with.contains(&"x".to_string()) && with.len() == HEAVY.len() + 1);
    let without = all(&spec("powerpc64le", false, &[]));
    assert!(SYSCALL_BULK.iter().all(|n| without.iter().any(|w| w == n)));
    // s390x also skips the 2 GiB request where its vDSO has getrandom; where it has
    // none, the bulk group already names it, once.
    let s390x = all(&spec("s390x", true, &[]));
    let cut = "a_request_past_the_kernels_limit_is_cut_where_the_kernel_cuts";
    assert_eq!(s390x.iter().filter(|n| *n == cut).count(), 1, "{s390x:?}");
    assert_eq!(s390x.len(), HEAVY.len() + 1, "{s390x:?}");
    // aarch64 and i686 skip no bulk test of their own: their getrandom request and
    // their first-call reader's truncations and mutations run in their machines.
    assert_eq!(all(&spec("aarch64", true, &[])), names_of(HEAVY));
    assert_eq!(all(&spec("i686", true, &[])), names_of(HEAVY));
    let s390x_old = all(&spec("s390x", false, &[]));
    assert_eq!(s390x_old.iter().filter(|n| *n == cut).count(), 1);
    assert!(TOO_SLOW_UNDER_TCG.iter().all(|(arch, _, _)| {
        crate::kernels::machines::ALL
            .iter()
            .any(|m| m.arch == *arch)
    }));
    // The names are the tests' own, and `--skip` (a substring match, in every test
    // binary) matches no other function.
    let core = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/vdsotime");
    let mut dirs = vec![core.join("tests"), core.join("src")];
    let mut functions: Vec<String> = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            if entry.path().is_dir() {
                dirs.push(entry.path());
                continue;
            }
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            for rest in text.split("fn ").skip(1) {
                functions.push(rest.split(['(', '<']).next().unwrap().trim().to_string());
            }
        }
    }
    let slow = TOO_SLOW_UNDER_TCG
        .iter()
        .flat_map(|(_, tests, _)| tests.iter());
    for name in HEAVY.iter().chain(SYSCALL_BULK).chain(slow) {
        let matched: Vec<&String> = functions.iter().filter(|f| f.contains(name)).collect();
        assert_eq!(matched, [name], "{name}");
    }
}
