//! The README's quick starts are the examples, verbatim: the Rust program in the README is
//! `src/main.rs` (without its leading doc comment), which `examples.rs` runs, and the C
//! program is `c/quickstart.c`, which crates/vdsotime-c/tests/install.rs installs, builds
//! and runs as the README says. So what a reader copies is what the tests run.

use std::path::Path;

/// The fenced blocks of `lang` in `markdown`, in order.
fn blocks<'a>(markdown: &'a str, lang: &str) -> Vec<&'a str> {
    let fence = format!("```{lang}\n");
    let mut found = Vec::new();
    let mut rest = markdown;
    while let Some(start) = rest.find(&fence) {
        let body = &rest[start + fence.len()..];
        let end = body.find("```\n").expect("an unterminated fenced block");
        found.push(&body[..end]);
        rest = &body[end..];
    }
    found
}

#[test]
fn readme_rust_quick_start_is_examples_src_main_rs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let main = std::fs::read_to_string(root.join("examples/src/main.rs")).expect("main.rs");
    let program: String = main
        .lines()
        .skip_while(|l| l.starts_with("//!") || l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    let rust = blocks(&readme, "rust");
    assert!(
        rust.contains(&program.as_str()),
        "README.md has no ```rust block equal to examples/src/main.rs:\n{program}"
    );
}

#[test]
fn readme_c_quick_start_is_examples_c_quickstart_c() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let program = std::fs::read_to_string(root.join("examples/c/quickstart.c")).expect("c");
    assert!(
        blocks(&readme, "c").contains(&program.as_str()),
        "README.md has no ```c block equal to examples/c/quickstart.c"
    );
}

/// The value of `key = value` in `toml`'s lines, if one line sets it.
fn setting<'a>(toml: &'a str, key: &str) -> Option<&'a str> {
    toml.lines()
        .find_map(|l| l.strip_prefix(key)?.trim_start().strip_prefix('='))
        .map(str::trim)
}

/// The README's custom backend of the getrandom crate (and the `random` module's rustdoc's)
/// is `examples/getrandom-backend`,
/// which `examples.rs` builds with that cfg and runs: the same dependencies (a path
/// dependency to the same crate), the macro line of its `main.rs`, and the cfg of the
/// command in its documentation.
#[test]
fn readme_getrandom_backend_is_examples_getrandom_backend() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let project = root.join("examples/getrandom-backend");
    let manifest = std::fs::read_to_string(project.join("Cargo.toml")).expect("Cargo.toml");
    let main = std::fs::read_to_string(project.join("src/main.rs")).expect("main.rs");
    let toml = blocks(&readme, "toml");
    let deps = toml
        .iter()
        .find(|b| b.contains("vdsotime-getrandom"))
        .expect("README.md: no ```toml block with vdsotime-getrandom");
    for line in deps.lines().filter(|l| l.contains('=')) {
        let (key, value) = line.split_once('=').expect("key = value");
        let key = key.trim();
        let ours = setting(&manifest, key).unwrap_or_else(|| panic!("{key} not in {manifest}"));
        match value.split_once("path = \"") {
            Some((_, path)) => {
                let crate_dir = path.split('"').next().unwrap().rsplit("/crates/").next();
                assert!(
                    ours.contains(&format!("/crates/{}\"", crate_dir.unwrap())),
                    "{line}"
                );
            }
            None => assert_eq!(value.trim(), ours, "{line}"),
        }
    }
    let invocation = "vdsotime_getrandom::custom_backend!();";
    assert!(readme.contains(&format!("`{invocation}`")), "README.md");
    assert!(main.lines().any(|l| l == invocation), "main.rs");
    let cfg = |text: &str| -> String {
        let at = text.find("RUSTFLAGS='").expect("a RUSTFLAGS command") + 11;
        text[at..].split('\'').next().unwrap().to_string()
    };
    let sh = blocks(&readme, "sh");
    let command = sh
        .iter()
        .find(|b| b.contains("getrandom_backend"))
        .expect("README.md: no ```sh block with the cfg");
    assert_eq!(cfg(command), cfg(&main));
    assert_eq!(cfg(command), "--cfg getrandom_backend=\"custom\"");

    // The `random` module's rustdoc shows the same lines.
    let module = std::fs::read_to_string(root.join("crates/vdsotime/src/random/mod.rs"))
        .expect("random/mod.rs");
    let doc: String = module
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| format!("{}\n", l.strip_prefix(' ').unwrap_or(l)))
        .collect();
    for block in [*deps, *command] {
        assert!(
            doc.contains(block),
            "random/mod.rs's documentation lacks:\n{block}"
        );
    }
    assert!(doc.contains(&format!("`{invocation}`")), "random/mod.rs");
}
