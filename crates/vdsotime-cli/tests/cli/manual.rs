//! The man pages and shell completions are generated from the same definitions as
//! `--help`, and the install script puts them where man and the shells look.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::skip::skip;
use crate::{parts, run, scratch};

/// The visible subcommands, as `vdsotime --help` lists them.
fn subcommands() -> Vec<String> {
    let (_, out, _) = parts(&run(&["--help"]));
    let list = out.split_once("Commands:\n").expect("Commands:").1;
    list.lines()
        .take_while(|l| l.starts_with("  "))
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

/// `man -l FILE` rendered as plain text, or None (after a visible skip) without man.
fn render(test: &str, page: &Path) -> Option<String> {
    let out = crate::process::run(
        Command::new("man")
            .arg("-l")
            .arg(page)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "200"),
        crate::LIMIT,
    );
    match out {
        Ok(o) if o.status.success() => Some(String::from_utf8_lossy(&o.stdout).into_owned()),
        Ok(o) => panic!("man -l {page:?}: {o:?}"),
        Err(crate::process::Error::Spawn(e)) => {
            skip(test, "help-tools", format!("man: {e}"));
            None
        }
        Err(hung) => panic!("{hung}"),
    }
}

/// The text of section `title` of a rendered page (up to the next section), or "".
fn section<'a>(page: &'a str, title: &str) -> &'a str {
    let Some((_, rest)) = page.split_once(&format!("\n{title}\n")) else {
        return "";
    };
    let end = rest
        .match_indices('\n')
        .map(|(i, _)| i + 1)
        .find(|&i| rest[i..].starts_with(|c: char| c.is_ascii_uppercase()))
        .unwrap_or(rest.len());
    &rest[..end]
}

/// The section titles of a rendered page, in order.
fn titles(page: &str) -> Vec<&str> {
    page.lines()
        .skip(1)
        .filter(|l| l.starts_with(|c: char| c.is_ascii_uppercase()) && !l.contains("  "))
        .collect()
}

/// What every page must be: NAME, SYNOPSIS, a DESCRIPTION that does not repeat NAME (each
/// command's `--help` prose or long about), SEE ALSO; no section named EXTRA.
fn reads_as_written(name: &str, page: &str) {
    let sections = titles(page);
    for title in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "SEE ALSO"] {
        assert!(
            sections.contains(&title),
            "{name}(1) has no {title} (sections {sections:?}): give the command a second doc \
             paragraph or prose in its after_help (crates/vdsotime-cli/src/manual/prose.rs)\n{page}"
        );
    }
    assert!(!sections.contains(&"EXTRA"), "{name}(1): {sections:?}");
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let about = words(section(page, "NAME"));
    let about = about
        .split_once(" - ")
        .map_or("", |(_, a)| a)
        .trim_end_matches('.');
    let description = words(section(page, "DESCRIPTION"));
    assert!(
        !about.is_empty() && !description.starts_with(about),
        "{name}(1): DESCRIPTION repeats NAME ({about:?}):\n{page}"
    );
}

#[test]
fn man_pages_cover_every_subcommand_and_the_exit_codes() {
    const TEST: &str = "man_pages_cover_every_subcommand_and_the_exit_codes";
    let dir = scratch("man1");
    let (code, out, err) = parts(&run(&["man", "--dir", dir.to_str().expect("utf-8")]));
    assert_eq!(code, 0, "{err}");
    let subs = subcommands();
    assert!(subs.len() >= 8, "{subs:?}");
    for sub in &subs {
        let page = dir.join(format!("vdsotime-{sub}.1"));
        assert!(out.contains(page.to_str().expect("utf-8")), "{out}");
        assert!(page.is_file(), "{page:?}");
    }
    let Some(main) = render(TEST, &dir.join("vdsotime.1")) else {
        return;
    };
    for sub in &subs {
        assert!(
            main.contains(&format!("vdsotime-{sub}(1)")),
            "{sub}:\n{main}"
        );
    }
    assert!(main.contains("64 usage error"), "{main}");
    let doctor = render(TEST, &dir.join("vdsotime-doctor.1")).expect("rendered above");
    for needle in ["--format", "prometheus", "2 degraded", "64 usage error"] {
        assert!(doctor.contains(needle), "{needle}:\n{doctor}");
    }
    for sub in &subs {
        let page = render(TEST, &dir.join(format!("vdsotime-{sub}.1"))).expect("rendered above");
        reads_as_written(&format!("vdsotime-{sub}"), &page);
        assert!(
            section(&page, "SEE ALSO").contains("vdsotime(1)"),
            "vdsotime-{sub}(1): SEE ALSO lacks vdsotime(1):\n{page}"
        );
    }
    reads_as_written("vdsotime", &main);
    // No page for clap's `help` subcommand (it is --help), nor a mention of one.
    assert!(!dir.join("vdsotime-help.1").exists());
    assert!(!out.contains("vdsotime-help"), "{out}");
    assert!(!main.contains("vdsotime-help"), "{main}");
    // The synopsis names each option's value, the units and rules are under FILES.
    let synopsis = section(&doctor, "SYNOPSIS");
    for needle in ["--duration DURATION", "--format FORMAT", "-o|--output FILE"] {
        assert!(synopsis.contains(needle), "{needle}:\n{synopsis}");
    }
    let completions = render(TEST, &dir.join("vdsotime-completions.1")).expect("rendered");
    assert!(section(&completions, "SYNOPSIS").contains("vdsotime completions SHELL"));
    for page in [&main, &doctor] {
        let files = section(page, "FILES");
        for needle in [
            "vdsotime-doctor.service",
            "vdsotime-doctor.timer",
            "vdsotime.rules.yml",
        ] {
            assert!(files.contains(needle), "{needle}:\n{page}");
        }
    }
    assert!(
        section(&main, "SEE ALSO").contains("libvdsotime(3)"),
        "{main}"
    );
    // Every finding code, as docs/doctor.md lists them (a unit test holds that list to the
    // code's own), with the pages the unit and the metrics name.
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/doctor.md"))
        .expect("docs/doctor.md");
    let table = doc.split_once("## Finding codes").expect("the codes").1;
    let table = table.split_once("\n## ").map_or(table, |t| t.0);
    let codes: Vec<&str> = table
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once('`').map(|c| c.0))
        .collect();
    assert!(codes.len() >= 18, "{codes:?}");
    let listed = doctor.split_once("FINDING CODES").expect("FINDING CODES").1;
    for code in codes {
        assert!(
            listed
                .lines()
                .any(|l| l.trim().starts_with(&format!("{code}:"))),
            "vdsotime-doctor(1) lacks {code}:\n{listed}"
        );
    }
    for page in [
        "/usr/share/doc/vdsotime/doctor.md",
        "/usr/share/doc/vdsotime/fleet.md",
    ] {
        assert!(listed.contains(page), "{page}");
    }
    // The page on stdout is the same vdsotime(1).
    let (code, page, _) = parts(&run(&["man"]));
    assert_eq!(code, 0);
    assert_eq!(
        page,
        std::fs::read_to_string(dir.join("vdsotime.1")).expect("read")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// What bash completes for the words of `line` (the last one being completed), with the
/// script from `vdsotime completions bash` loaded.
fn bash_complete(script: &Path, line: &str) -> Vec<String> {
    let program = format!(
        r#"source {script:?}
COMP_LINE={line:?}
COMP_WORDS=($COMP_LINE)
[ "${{COMP_LINE: -1}}" = " " ] && COMP_WORDS+=("")
COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1))
COMP_POINT=${{#COMP_LINE}}
_vdsotime vdsotime "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}""#
    );
    let out = crate::process::output(Command::new("bash").args(["-c", &program]), crate::LIMIT);
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn completions_complete_subcommands_and_options() {
    let dir = scratch("completions");
    let script = dir.join("vdsotime.bash");
    let (code, bash, _) = parts(&run(&["completions", "bash"]));
    assert_eq!(code, 0);
    std::fs::write(&script, &bash).expect("write");
    assert_eq!(bash_complete(&script, "vdsotime do"), ["doctor"]);
    assert_eq!(bash_complete(&script, "vdsotime doctor --fo"), ["--format"]);
    let formats = bash_complete(&script, "vdsotime doctor --format ");
    assert_eq!(formats, ["text", "json", "prometheus"], "{formats:?}");
    // zsh and fish are not run here (neither shell is on a Debian machine by default); their
    // scripts must still name every subcommand.
    for shell in ["zsh", "fish"] {
        let (code, text, err) = parts(&run(&["completions", shell]));
        assert_eq!(code, 0, "{err}");
        for sub in subcommands() {
            assert!(text.contains(&sub), "{shell} completions lack {sub}");
        }
    }
    let (code, _, err) = parts(&run(&["completions", "tcsh"]));
    assert_eq!(code, 64, "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// crates/vdsotime-cli/install.sh.
fn install_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh")
}

#[test]
fn install_script_puts_the_tool_its_pages_and_completions_under_destdir() {
    let stage = scratch("install-stage");
    let built = Path::new(env!("CARGO_BIN_EXE_vdsotime"))
        .parent()
        .expect("profile directory");
    let out = crate::process::output(
        Command::new("sh")
            .arg(install_script())
            .args(["--prefix", "/usr", "--from"])
            .arg(built)
            .env("DESTDIR", &stage),
        crate::LIMIT,
    );
    assert!(out.status.success(), "{out:?}");
    for file in [
        "usr/bin/vdsotime",
        "usr/share/man/man1/vdsotime.1",
        "usr/share/man/man1/vdsotime-doctor.1",
        "usr/share/bash-completion/completions/vdsotime",
        "usr/share/zsh/site-functions/_vdsotime",
        "usr/share/fish/vendor_completions.d/vdsotime.fish",
        // Staged (DESTDIR) for another system: systemd's directory there, whatever this
        // machine's systemd says (Debian 12's says /lib/systemd/system).
        "usr/lib/systemd/system/vdsotime-doctor.service",
        "usr/lib/systemd/system/vdsotime-doctor.timer",
    ] {
        assert!(stage.join(file).is_file(), "{file} not installed: {out:?}");
    }
    assert!(!stage.join("lib").exists(), "{out:?}");
    let installed = crate::process::output(
        Command::new(stage.join("usr/bin/vdsotime")).arg("--version"),
        crate::LIMIT,
    );
    assert!(installed.status.success(), "{installed:?}");
    let help = crate::process::output(
        Command::new("sh").arg(install_script()).arg("--help"),
        crate::LIMIT,
    );
    assert!(help.status.success(), "{help:?}");
    assert!(String::from_utf8_lossy(&help.stdout).contains("DESTDIR"));
    let bad = crate::process::output(
        Command::new("sh").arg(install_script()).arg("--prefx"),
        crate::LIMIT,
    );
    assert_eq!(bad.status.code(), Some(64), "{bad:?}");
    let _ = std::fs::remove_dir_all(&stage);
}
