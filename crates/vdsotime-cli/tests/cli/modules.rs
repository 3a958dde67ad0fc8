//! The tool's modules form no import circle: laid out by what they do (a folder per
//! family of subcommands over a shared measurement core), each module may use the
//! shared ones and its own children, never one that uses it back.
//!
//! The graph is read from the sources: a module is a file under `src/` (`a/b.rs` and
//! `a/b/mod.rs` are `a::b`), and it depends on every module a path in it names (the
//! longest prefix that is a module): `crate::` and `super::` paths, `self::` paths, and a
//! relative path that starts with one of its own child modules (`table::print` in
//! `bench`). A path into a module from outside its parent also depends on that parent
//! (`report` naming `crate::bench::first_call` depends on `bench`): a family of modules is
//! one layer. `mod x;` declarations are structure, not use, and an inline
//! `#[cfg(test)] mod tests { .. }` block counts as its own module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `bench/table.rs` -> ["bench", "table"]; `bench/mod.rs` -> ["bench"]; main.rs -> [].
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file
        .strip_prefix(src)
        .expect("under src")
        .with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "main")) {
        parts.pop();
    }
    parts
}

/// The code of a file without its inline test module.
fn without_inline_tests(code: &str) -> &str {
    match code.find("#[cfg(test)]\nmod tests {") {
        Some(i) => &code[..i],
        None => code,
    }
}

/// The path that follows `at` in `code`: `a::b::C` gives ["a", "b", "C"].
fn path_at(code: &str) -> Vec<String> {
    let tail: String = code
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
        .collect();
    tail.split("::")
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// Whether `c`, the character before a path, makes it part of a longer one.
fn continues_a_path(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
}

/// The module paths a file's code names: `crate::a::b::C` gives ["a", "b", "C"];
/// `super::x` and `self::x` are resolved against `module`, and so is a path that starts
/// with one of `module`'s children. Grouped imports count by their prefix.
fn named_paths(code: &str, module: &[String], modules: &BTreeSet<Vec<String>>) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for (prefix, base) in [
        ("crate::", Vec::new()),
        ("super::", module[..module.len().saturating_sub(1)].to_vec()),
        ("self::", module.to_vec()),
    ] {
        let mut rest = code;
        while let Some(i) = rest.find(prefix) {
            let preceded = rest[..i].chars().last();
            rest = &rest[i + prefix.len()..];
            if continues_a_path(preceded) {
                continue;
            }
            let mut path = base.clone();
            path.extend(path_at(rest));
            found.push(path);
        }
    }
    // Relative paths through a child: `child::item` wherever it starts a path.
    let children = modules
        .iter()
        .filter(|m| m.len() == module.len() + 1 && m.starts_with(module));
    for child in children {
        let prefix = format!("{}::", child[module.len()]);
        let mut rest = code;
        while let Some(i) = rest.find(&prefix) {
            let preceded = rest[..i].chars().last();
            rest = &rest[i + prefix.len()..];
            if continues_a_path(preceded) {
                continue;
            }
            let mut path = child.clone();
            path.extend(path_at(rest));
            found.push(path);
        }
    }
    found
}

/// The modules a reference from `from` to `target` depends on: `target`, and each of its
/// ancestors that is not also an ancestor of `from`.
fn dependencies(from: &[String], target: &[String]) -> Vec<Vec<String>> {
    let mut found: Vec<Vec<String>> = (1..target.len())
        .map(|n| target[..n].to_vec())
        .filter(|m| !from.starts_with(m))
        .collect();
    found.push(target.to_vec());
    found
}

#[test]
fn the_tools_modules_have_no_import_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for file in &files {
        let module = module_of(&src, file);
        let code = std::fs::read_to_string(file).expect("read source");
        for path in named_paths(without_inline_tests(&code), &module, &modules) {
            let target = (0..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|p| modules.contains(p))
                .expect("the crate root is a module");
            for dependency in dependencies(&module, &target) {
                if dependency != module {
                    edges.entry(module.clone()).or_default().insert(dependency);
                }
            }
        }
    }
    // Depth-first search for a back edge; report the circle it closes.
    fn visit(
        m: &Vec<String>,
        edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        stack: &mut Vec<Vec<String>>,
        done: &mut BTreeSet<Vec<String>>,
        circles: &mut Vec<String>,
    ) {
        if done.contains(m) {
            return;
        }
        if let Some(at) = stack.iter().position(|s| s == m) {
            let names: Vec<String> = stack[at..]
                .iter()
                .chain(std::iter::once(m))
                .map(|p| format!("crate::{}", p.join("::")))
                .collect();
            circles.push(names.join(" -> "));
            return;
        }
        stack.push(m.clone());
        for next in edges.get(m).into_iter().flatten() {
            visit(next, edges, stack, done, circles);
        }
        stack.pop();
        done.insert(m.clone());
    }
    let mut circles = Vec::new();
    let mut done = BTreeSet::new();
    for m in &modules {
        visit(m, &edges, &mut Vec::new(), &mut done, &mut circles);
    }
    assert!(
        circles.is_empty(),
        "import circles among the tool's modules:\n{}",
        circles.join("\n")
    );
}
