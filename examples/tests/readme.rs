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
