//! The man pages and shell completions, generated from the argument definitions so they
//! never drift from `--help`.

use std::io::Write;
use std::path::Path;

use clap_complete::Shell as Generator;

use crate::output::Exit;

/// Writes the completion script of `cmd` for `shell` to standard output.
pub fn completions(mut cmd: clap::Command, shell: Generator) -> Exit {
    let name = cmd.get_name().to_string();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(shell, &mut cmd, name, &mut out);
    out.flush().map_err(|e| format!("standard output: {e}"))?;
    Ok(0)
}

/// Renders one page.
fn render(cmd: clap::Command) -> Result<Vec<u8>, String> {
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd)
        .section("1")
        .manual("vdsotime manual")
        .render(&mut page)
        .map_err(|e| format!("rendering the man page: {e}"))?;
    Ok(page)
}

/// `text` as roff body text: backslashes escaped, no line taken for a request.
fn roff(text: &str) -> String {
    let t = text.replace('\\', "\\e");
    if t.starts_with(['.', '\'']) {
        format!("\\&{t}")
    } else {
        t
    }
}

/// The sections vdsotime-doctor(1) adds to what clap renders: every finding code, from
/// the code's own list, and the pages installed beside it.
fn doctor_sections() -> String {
    use crate::doctor::findings::Code;
    let mut out = String::from(
        ".SH \"FINDING CODES\"\n\
         Each finding has a stable code, in the text output in brackets, in JSON as \\fBcode\\fR, \
         in the metrics as the \\fBcode\\fR label of \\fBvdsotime_findings\\fR. \
         Its severity, what it means and what to do: /usr/share/doc/vdsotime/doctor.md.\n",
    );
    for code in Code::ALL {
        out += &format!(".TP\n\\fB{}\\fR\n{}\n", code.as_str(), roff(code.meaning()));
    }
    out += ".SH FILES\n\
            .TP\n/usr/share/doc/vdsotime/doctor.md\n\
            The doctor: how it decides, the finding codes, the JSON document and the metrics.\n\
            .TP\n/usr/share/doc/vdsotime/fleet.md\n\
            vdsotime-doctor.service and .timer, the alert rules, and their rollout on a fleet.\n";
    out
}

/// Prints vdsotime(1), or with `dir` writes it and `vdsotime-SUBCOMMAND(1)` for every
/// visible subcommand there.
pub fn man(cmd: clap::Command, dir: Option<&Path>) -> Exit {
    let Some(dir) = dir else {
        let page = render(cmd)?;
        std::io::stdout()
            .write_all(&page)
            .map_err(|e| format!("standard output: {e}"))?;
        return Ok(0);
    };
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut cmd = cmd;
    cmd.build();
    let name = cmd.get_name().to_string();
    let mut pages = vec![(format!("{name}.1"), render(cmd.clone())?)];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let full = format!("{name}-{}", sub.get_name());
        let doctor = sub.get_name() == "doctor";
        let sub = sub.clone().name(full.clone()).display_name(full.clone());
        let mut page = render(sub)?;
        if doctor {
            page.extend_from_slice(doctor_sections().as_bytes());
        }
        pages.push((format!("{full}.1"), page));
    }
    for (file, page) in pages {
        let path = dir.join(file);
        std::fs::write(&path, page).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("{}", path.display());
    }
    Ok(0)
}
