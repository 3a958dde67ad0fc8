//! One man page, rendered from a command's definition: NAME and OPTIONS as clap_mangen
//! writes them; SYNOPSIS with a placeholder for every value; DESCRIPTION and the other
//! sections from the command's `--help` prose (`prose`) and the page's additions
//! (`extra`); COMMANDS (on vdsotime(1)) and SEE ALSO naming the other pages.

use clap::{Arg, ArgAction, Command};
use roff::{roman, Roff};

use super::extra;
use super::prose::{self, Section};

/// The man page `name` (`vdsotime` or `vdsotime-SUBCOMMAND`) of `cmd`, which is built.
/// `invoked` is how a user types the command (`vdsotime doctor`); `subcommands` are the
/// pages listed under COMMANDS (vdsotime(1) only).
pub fn render(
    cmd: &Command,
    name: &str,
    invoked: &str,
    subcommands: &[(String, String)],
) -> Result<Vec<u8>, String> {
    let about = cmd.get_about().map(|a| a.to_string()).unwrap_or_default();
    let titled = cmd
        .clone()
        .name(name.to_string())
        .display_name(name.to_string());
    let man = clap_mangen::Man::new(titled).section("1");
    let fail = |e: std::io::Error| format!("rendering the man page {name}(1): {e}");
    // .TH by hand: clap_mangen drops an empty date, which shifts the fields after it.
    let mut page = Roff::new().render().into_bytes();
    page.extend_from_slice(
        format!(
            ".TH {} 1 \"\" \"vdsotime {}\" \"User Commands\"\n",
            name.to_uppercase().replace('-', "\\-"),
            env!("CARGO_PKG_VERSION")
        )
        .as_bytes(),
    );
    let mut part = Vec::new();
    man.render_name_section(&mut part).map_err(fail)?;
    append_bytes(&mut page, &part);
    let after = cmd
        .get_after_long_help()
        .or(cmd.get_after_help())
        .map(ToString::to_string);
    let long = cmd.get_long_about().map(ToString::to_string);
    let mut sections = prose::sections(&about, long.as_deref(), after.as_deref());
    let extra = extra::of(name);
    sections.extend(extra::generated(name));
    for (title, text) in extra.map_or(&[][..], |e| e.sections) {
        sections.push(Section {
            title: title.to_uppercase(),
            paragraphs: vec![text.to_string()],
        });
    }

    page.extend_from_slice(synopsis(cmd, invoked, !subcommands.is_empty()).as_bytes());
    let mut roff = Roff::new();
    if let Some(description) = sections.iter().find(|s| s.title == "DESCRIPTION") {
        section(&mut roff, description);
    }
    append(&mut page, &roff);
    let mut part = Vec::new();
    man.render_options_section(&mut part).map_err(fail)?;
    append_bytes(&mut page, &part);

    let mut roff = Roff::new();
    if !subcommands.is_empty() {
        roff.control("SH", ["COMMANDS"]);
        for (page, about) in subcommands {
            roff.control("TP", []);
            roff.text([roff::bold(page.as_str()), roman("(1)")]);
            roff.text([roman(about.as_str())]);
        }
    }
    let standard: Vec<String> = prose::STANDARD.iter().map(|s| s.to_uppercase()).collect();
    let own = |s: &&Section| s.title != "DESCRIPTION" && !standard.contains(&s.title);
    for s in sections.iter().filter(own) {
        section(&mut roff, s);
    }
    for title in &standard {
        if let Some(s) = sections.iter().find(|s| &s.title == title) {
            if title == "FILES" || title == "SEE ALSO" {
                continue;
            }
            section(&mut roff, s);
        }
    }
    files(
        &mut roff,
        extra,
        sections.iter().find(|s| s.title == "FILES"),
    );
    see_also(&mut roff, name, subcommands.is_empty(), extra);
    append(&mut page, &roff);
    Ok(page)
}

/// Appends `roff` without the preamble every rendering starts with (the page has it).
fn append(page: &mut Vec<u8>, roff: &Roff) {
    append_bytes(page, roff.render().as_bytes());
}

/// Appends a rendering without its preamble.
fn append_bytes(page: &mut Vec<u8>, rendered: &[u8]) {
    let preamble = Roff::new().render();
    page.extend_from_slice(
        rendered
            .strip_prefix(preamble.as_bytes())
            .unwrap_or(rendered),
    );
}

/// SYNOPSIS: the command, then each option with its value's placeholder, and each
/// positional argument; for vdsotime(1) also the form with a subcommand. Written as roff
/// text directly: an option and its placeholder are joined by a space that never breaks.
fn synopsis(cmd: &Command, invoked: &str, has_commands: bool) -> String {
    let args: Vec<&Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter(|a| {
            !matches!(
                a.get_action(),
                ArgAction::Help | ArgAction::HelpShort | ArgAction::Version
            )
        })
        .collect();
    let mut line = bold(invoked);
    for arg in args.iter().filter(|a| !a.is_positional()) {
        line.push(' ');
        line.push_str(&option(arg));
    }
    for arg in args.iter().filter(|a| a.is_positional()) {
        let value = italic(&placeholder(arg));
        line.push(' ');
        if arg.is_required_set() {
            line.push_str(&value);
        } else {
            line.push_str(&format!("[{value}]"));
        }
    }
    let mut out = format!(".SH SYNOPSIS\n.ad l\n.nh\n{line}\n");
    if has_commands {
        let command = format!(
            "{} {} [{}]",
            bold(invoked),
            italic("COMMAND"),
            italic("OPTIONS")
        );
        out.push_str(&format!(".br\n{command}\n"));
    }
    out.push_str(".hy\n.ad\n");
    out
}

/// Text escaped for a roff text line: backslashes and hyphens (as minus signs, so a
/// command line can be copied from the page).
fn escape(text: &str) -> String {
    text.replace('\\', r"\\").replace('-', r"\-")
}

/// `text` in bold.
fn bold(text: &str) -> String {
    format!(r"\fB{}\fR", escape(text))
}

/// `text` in italics.
fn italic(text: &str) -> String {
    format!(r"\fI{}\fR", escape(text))
}

/// One option as the synopsis shows it: `[-o|--output FILE]`, `[--json]`, `[--bytes N]...`.
fn option(arg: &Arg) -> String {
    let mut out = String::new();
    let required = arg.is_required_set();
    if !required {
        out.push('[');
    }
    if let Some(short) = arg.get_short() {
        out.push_str(&bold(&format!("-{short}")));
        if arg.get_long().is_some() {
            out.push('|');
        }
    }
    if let Some(long) = arg.get_long() {
        out.push_str(&bold(&format!("--{long}")));
    }
    if arg.get_num_args().is_some_and(|n| n.takes_values()) {
        out.push_str(r"\ ");
        out.push_str(&italic(&placeholder(arg)));
    }
    if !required {
        out.push(']');
    }
    if matches!(arg.get_action(), ArgAction::Append | ArgAction::Count) {
        out.push_str("...");
    }
    out
}

/// The name of an argument's value: its value name, else its id in upper case.
fn placeholder(arg: &Arg) -> String {
    match arg.get_value_names() {
        Some([first, ..]) => first.to_string(),
        _ => arg.get_id().as_str().to_uppercase(),
    }
}

/// A section of prose: each paragraph's unindented lines filled as text, its indented
/// lines (examples, lists) kept as they are.
fn section(roff: &mut Roff, s: &Section) {
    roff.control("SH", [s.title.as_str()]);
    for (i, paragraph) in s.paragraphs.iter().enumerate() {
        if i > 0 {
            roff.control("PP", []);
        }
        prose_block(roff, paragraph);
    }
}

/// One paragraph (see [`section`]).
fn prose_block(roff: &mut Roff, paragraph: &str) {
    let lines: Vec<&str> = paragraph.lines().collect();
    let mut i = 0;
    while let Some(first) = lines.get(i) {
        let indented = first.starts_with(' ');
        let run: Vec<&str> = lines[i..]
            .iter()
            .take_while(|l| l.starts_with(' ') == indented)
            .copied()
            .collect();
        i += run.len();
        if indented {
            let margin = run
                .iter()
                .map(|l| l.len() - l.trim_start().len())
                .min()
                .unwrap_or(0);
            roff.control("RS", []);
            roff.control("EX", []);
            for line in &run {
                roff.text([roman(line.get(margin..).unwrap_or(line))]);
            }
            roff.control("EE", []);
            roff.control("RE", []);
        } else {
            roff.text([roman(run.join(" "))]);
        }
    }
}

/// FILES: the page's files from `extra` with its note, and any `Files:` prose.
fn files(roff: &mut Roff, extra: Option<&extra::Extra>, prose: Option<&Section>) {
    let listed = extra.map_or(&[][..], |e| e.files);
    if listed.is_empty() && prose.is_none() {
        return;
    }
    roff.control("SH", ["FILES"]);
    for (path, what) in listed {
        roff.control("TP", []);
        roff.text([roff::italic(*path)]);
        roff.text([roman(*what)]);
    }
    if let Some(note) = extra.map(|e| e.files_note).filter(|n| !n.is_empty()) {
        roff.control("PP", []);
        roff.text([roman(note)]);
    }
    for paragraph in prose.map_or(&[][..], |s| &s.paragraphs[..]) {
        roff.control("PP", []);
        prose_block(roff, paragraph);
    }
}

/// SEE ALSO: vdsotime(1) from a subcommand's page, then the page's own references.
fn see_also(roff: &mut Roff, name: &str, is_subcommand: bool, extra: Option<&extra::Extra>) {
    let mut refs: Vec<&str> = Vec::new();
    if is_subcommand && name != "vdsotime" {
        refs.push("vdsotime(1)");
    }
    refs.extend(extra.map_or(&[][..], |e| e.see_also));
    if refs.is_empty() {
        return;
    }
    roff.control("SH", ["SEE ALSO"]);
    let mut line = Vec::new();
    for (i, reference) in refs.iter().enumerate() {
        let (page, section) = reference.split_once('(').unwrap_or((reference, ""));
        if i > 0 {
            line.push(roman(", "));
        }
        line.extend([roff::bold(page), roman(format!("({section}"))]);
    }
    roff.text(line);
}
