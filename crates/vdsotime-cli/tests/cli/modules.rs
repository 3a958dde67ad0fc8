//! The tool's modules form no import circle: laid out by what they do (a folder per
//! family of subcommands over a shared measurement core), each module may use the
//! shared ones and its own children, never one that uses it back.
//!
//! The graph is read from the sources: a module is a file under `src/` (`a/b.rs` and
//! `a/b/mod.rs` are `a::b`), and it depends on every module a path in it names (the
//! longest prefix that is a module): `crate::` and `super::` paths, `self::` paths, and a
//! relative path that starts with one of its own child modules (`table::print` in
//! `bench`). A grouped import names each of its members (`super::{a, b}` names `a` and
//! `b`, not their parent). A path into a module from outside its parent also depends on that parent
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

/// The paths a use tree at the start of `code` names: `a::b::C` gives [["a", "b", "C"]],
/// and a group gives one path per member: `a::{b, c::{self, d as e}, *}` gives
/// [["a", "b"], ["a", "c"], ["a", "c", "d"], ["a"]]. A group's `self` and `*` name its prefix.
fn paths_at(code: &str) -> Vec<Vec<String>> {
    use_tree(&mut code.chars().peekable())
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

fn skip_blanks(chars: &mut Chars) {
    while chars.next_if(|c| c.is_whitespace()).is_some() {}
}

fn identifier(chars: &mut Chars) -> String {
    let mut name = String::new();
    while let Some(c) = chars.next_if(|c| c.is_alphanumeric() || *c == '_' || *c == '*') {
        name.push(c);
    }
    name
}

/// One use tree: segments joined by `::`, possibly ending in a `{ .. }` group.
fn use_tree(chars: &mut Chars) -> Vec<Vec<String>> {
    let mut prefix: Vec<String> = Vec::new();
    loop {
        if chars.next_if_eq(&'{').is_some() {
            return group(chars)
                .into_iter()
                .map(|member| prefix.iter().cloned().chain(member).collect())
                .collect();
        }
        let name = identifier(chars);
        if !matches!(name.as_str(), "" | "self" | "*") {
            prefix.push(name);
        }
        if chars.peek() == Some(&':') {
            chars.next();
            if chars.next_if_eq(&':').is_some() {
                skip_blanks(chars);
                continue;
            }
        }
        return vec![prefix];
    }
}

/// The members of a group whose `{` was just read, through its `}`.
fn group(chars: &mut Chars) -> Vec<Vec<String>> {
    let mut members = Vec::new();
    loop {
        skip_blanks(chars);
        if chars.peek().is_none() || chars.next_if_eq(&'}').is_some() {
            return members;
        }
        members.extend(use_tree(chars));
        skip_blanks(chars);
        // `name as alias`: the alias names nothing new.
        if chars.peek() == Some(&'a') {
            identifier(chars);
            skip_blanks(chars);
            identifier(chars);
            skip_blanks(chars);
        }
        // The comma; anything else is no use tree, and is passed over.
        chars.next_if(|c| *c != '}');
    }
}

/// Whether `c`, the character before a path, makes it part of a longer one.
fn continues_a_path(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
}

/// The module paths a file's code names: `crate::a::b::C` gives ["a", "b", "C"];
/// `super::x` and `self::x` are resolved against `module`, and so is a path that starts
/// with one of `module`'s children. A grouped import names each of its members.
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
            for tail in paths_at(rest) {
                found.push(base.iter().cloned().chain(tail).collect());
            }
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
            for tail in paths_at(rest) {
                found.push(child.iter().cloned().chain(tail).collect());
            }
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

/// The import circles among `code`'s modules (each module's path and its code), one line
/// each: `crate::a -> crate::b -> crate::a`.
fn circles(code: &BTreeMap<Vec<String>, String>) -> Vec<String> {
    let modules: BTreeSet<Vec<String>> = code.keys().cloned().collect();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (module, text) in code {
        for path in named_paths(without_inline_tests(text), module, &modules) {
            let target = (0..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|p| modules.contains(p))
                .unwrap_or_default();
            for dependency in dependencies(module, &target) {
                if &dependency != module {
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
    circles
}

#[test]
fn the_tools_modules_have_no_import_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let code: BTreeMap<Vec<String>, String> = files
        .iter()
        .map(|f| {
            (
                module_of(&src, f),
                std::fs::read_to_string(f).expect("read source"),
            )
        })
        .collect();
    let circles = circles(&code);
    assert!(
        circles.is_empty(),
        "import circles among the tool's modules:\n{}",
        circles.join("\n")
    );
}

/// A crate made of `(module path, code)` pairs, `"a::b"` for `a/b.rs`, `""` for main.rs.
fn crate_of(files: &[(&str, &str)]) -> BTreeMap<Vec<String>, String> {
    files
        .iter()
        .map(|(path, code)| {
            let module = path.split("::").filter(|s| !s.is_empty()).map(String::from);
            (module.collect(), code.to_string())
        })
        .collect()
}

#[test]
fn a_grouped_import_of_siblings_is_not_an_import_of_their_parent() {
    // The parent uses its child, and the child names two siblings in one group, nested
    // groups, `self` and an alias: none of it names the parent itself.
    let code = crate_of(&[
        ("", "mod doctor;"),
        (
            "doctor",
            "mod rules; mod scene; mod symptoms;\nuse symptoms::run;",
        ),
        ("doctor::rules", ""),
        ("doctor::scene", ""),
        (
            "doctor::symptoms",
            "use crate::doctor::{rules,\n    scene::{self, Scene as S}};\nuse super::{rules::*};",
        ),
    ]);
    assert_eq!(circles(&code), Vec::<String>::new());
}

#[test]
fn a_circle_through_grouped_imports_is_found() {
    let code = crate_of(&[
        ("", "mod a; mod b;"),
        ("a", "use crate::b::{x, y};"),
        ("b", "use crate::{a::{z}, c};"),
    ]);
    assert_eq!(circles(&code), ["crate::a -> crate::b -> crate::a"]);
}

#[test]
fn a_group_names_each_member_and_its_prefix_where_it_says_self() {
    let names =
        |code: &str| -> Vec<String> { paths_at(code).iter().map(|p| p.join("::")).collect() };
    assert_eq!(names("a::b::C;"), ["a::b::C"]);
    assert_eq!(
        names("a::{b, c::{self, d as e}, *};"),
        ["a::b", "a::c", "a::c::d", "a"]
    );
    assert_eq!(names("{x::y, z}"), ["x::y", "z"]);
}
