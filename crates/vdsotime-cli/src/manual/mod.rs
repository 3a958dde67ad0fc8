//! The man pages and shell completions, generated from the argument definitions so they
//! never drift from `--help`: vdsotime(1) and one page per visible subcommand
//! (`page` renders one; `prose` sorts `--help` text into sections; `extra` holds what only
//! the pages say: their own sections, FILES, SEE ALSO).

mod extra;
mod page;
mod prose;

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

/// Every page: (file name, contents), vdsotime(1) first.
fn pages(mut cmd: clap::Command) -> Result<Vec<(String, Vec<u8>)>, String> {
    cmd.build();
    let name = cmd.get_name().to_string();
    // clap's own `help` subcommand is --help by another name: no page of its own.
    let subs: Vec<&clap::Command> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .collect();
    let listed: Vec<(String, String)> = subs
        .iter()
        .map(|s| {
            let about = s.get_about().map(|a| a.to_string()).unwrap_or_default();
            (format!("{name}-{}", s.get_name()), about)
        })
        .collect();
    let mut out = vec![(
        format!("{name}.1"),
        page::render(&cmd, &name, &name, &listed)?,
    )];
    for sub in subs {
        let page_name = format!("{name}-{}", sub.get_name());
        let invoked = format!("{name} {}", sub.get_name());
        let page = page::render(sub, &page_name, &invoked, &[])?;
        out.push((format!("{page_name}.1"), page));
    }
    Ok(out)
}

/// Prints vdsotime(1), or with `dir` writes it and `vdsotime-SUBCOMMAND(1)` for every
/// visible subcommand there.
pub fn man(cmd: clap::Command, dir: Option<&Path>) -> Exit {
    let pages = pages(cmd)?;
    let Some(dir) = dir else {
        let (_, main) = pages.first().ok_or("no page")?;
        std::io::stdout()
            .write_all(main)
            .map_err(|e| format!("standard output: {e}"))?;
        return Ok(0);
    };
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (file, page) in pages {
        let path = dir.join(file);
        std::fs::write(&path, page).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("{}", path.display());
    }
    Ok(0)
}
