//! `vdsotime dump`: writes the mapped vDSO image as an ELF file, so `readelf -a` and
//! `objdump -T` can show what this kernel really exports.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use serde::Serialize;

use crate::output::{self, Exit};

/// Options of `dump`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "Examples:
  vdsotime dump -o vdso.so && readelf -Ws vdso.so
  vdsotime dump > vdso.so && objdump -T vdso.so")]
pub struct DumpArgs {
    /// With -o, write where the image was written (file, address, size) as JSON.
    #[arg(long, requires = "output")]
    pub json: bool,
    /// File to write (default: standard output, unless it is a terminal).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// The `dump --json` document (written to stdout when the image goes to a file).
#[derive(Debug, Serialize)]
struct DumpReport {
    file: String,
    address: String,
    size: usize,
}

/// Runs `vdsotime dump`.
pub fn run(args: &DumpArgs, json: bool) -> Exit {
    let v = vdsotime::vdso().ok_or("this process has no vDSO (valgrind, vdso=0, or a sandbox)")?;
    let bytes = v.bytes();
    match &args.output {
        Some(path) => {
            std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
            let report = DumpReport {
                file: path.display().to_string(),
                address: format!("{:#x}", v.base()),
                size: bytes.len(),
            };
            if json {
                output::print_json(&report)?;
            } else {
                println!(
                    "wrote {} bytes of the vDSO mapped at {} to {} (try: readelf -Ws {})",
                    report.size, report.address, report.file, report.file
                );
            }
        }
        None => {
            let mut out = std::io::stdout().lock();
            if out.is_terminal() {
                return Err(
                    "refusing to write a binary image to a terminal: use -o FILE or a pipe".into(),
                );
            }
            out.write_all(bytes).map_err(|e| format!("stdout: {e}"))?;
        }
    }
    Ok(0)
}
