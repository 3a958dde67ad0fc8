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
        let sub = sub.clone().name(full.clone()).display_name(full.clone());
        pages.push((format!("{full}.1"), render(sub)?));
    }
    for (file, page) in pages {
        let path = dir.join(file);
        std::fs::write(&path, page).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("{}", path.display());
    }
    Ok(0)
}
