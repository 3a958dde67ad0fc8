//! Reading a machine's console: the `@vm` lines its init wrote (the protocol is described in
//! xtask/vm-init/src/report.rs), and from the `vdsotime` output among them the vDSO's
//! symbols and the vDSO-vs-syscall ratio.

use std::collections::BTreeMap;

/// One program the init ran.
#[derive(Debug, Default, Clone)]
pub struct Ran {
    pub label: String,
    /// PASS, FAIL or TIMEOUT; empty when the machine stopped before the program ended.
    pub verdict: String,
    pub status: String,
    pub millis: u64,
    pub lines: Vec<String>,
}

/// Everything the console said.
#[derive(Debug, Default)]
pub struct Console {
    pub release: Option<String>,
    pub cpus: Option<String>,
    pub runs: Vec<Ran>,
    /// Hex-encoded files, by label, with the error if lines were lost.
    pub files: BTreeMap<String, Result<Vec<u8>, String>>,
    pub errors: Vec<String>,
    pub done: bool,
}

impl Console {
    pub fn run(&self, label: &str) -> Option<&Ran> {
        self.runs.iter().find(|r| r.label == label)
    }
}

/// Parses the console log. A kernel message may precede `@vm` on a line; it is dropped.
pub fn parse(text: &str) -> Console {
    let mut c = Console::default();
    let mut hex: BTreeMap<String, (Vec<u8>, Option<String>)> = BTreeMap::new();
    for raw in text.lines() {
        let Some(at) = raw.find("@vm ") else {
            continue;
        };
        let line = raw[at + 4..].trim_end_matches('\r');
        let (kind, rest) = line.split_once(' ').unwrap_or((line, ""));
        match kind {
            "kernel" => c.release = Some(rest.to_string()),
            "cpus" => c.cpus = Some(rest.to_string()),
            "start" => c.runs.push(Ran {
                label: rest.to_string(),
                ..Ran::default()
            }),
            "out" => {
                if let Some((label, text)) = rest.split_once(" | ") {
                    if let Some(r) = c.runs.iter_mut().rev().find(|r| r.label == label) {
                        r.lines.push(text.to_string());
                    }
                }
            }
            "end" => {
                let f: Vec<&str> = rest.split(' ').collect();
                if let [label, verdict, status, millis] = f[..] {
                    if let Some(r) = c.runs.iter_mut().rev().find(|r| r.label == label) {
                        r.verdict = verdict.to_string();
                        r.status = status.replace('_', " ");
                        r.millis = millis.trim_end_matches("ms").parse().unwrap_or(0);
                    }
                }
            }
            "hex" => {
                let f: Vec<&str> = rest.split(' ').collect();
                if let [label, offset, data] = f[..] {
                    let entry = hex.entry(label.to_string()).or_default();
                    if offset.parse::<usize>().ok() != Some(entry.0.len()) {
                        entry
                            .1
                            .get_or_insert(format!("a line was lost before offset {offset}"));
                    }
                    match decode_hex(data) {
                        Some(bytes) => entry.0.extend(bytes),
                        None => {
                            entry
                                .1
                                .get_or_insert(format!("garbled line at offset {offset}"));
                        }
                    }
                }
            }
            "hexend" => {
                if let Some((label, len)) = rest.split_once(' ') {
                    let (bytes, err) = hex.remove(label).unwrap_or_default();
                    let result = match err {
                        Some(e) => Err(e),
                        None if len.parse::<usize>().ok() == Some(bytes.len()) => Ok(bytes),
                        None => Err(format!("{} bytes received, {len} sent", bytes.len())),
                    };
                    c.files.insert(label.to_string(), result);
                }
            }
            "error" => c.errors.push(rest.to_string()),
            "done" => c.done = true,
            _ => {}
        }
    }
    c
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The cells of a `| a | b |` table row, trimmed.
fn cells(line: &str) -> Option<Vec<&str>> {
    let inner = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    Some(inner.split('|').map(str::trim).collect())
}

/// (symbol, version) rows of `vdsotime info`'s symbol table (the one headed `symbol`).
pub fn symbols(info: &[String]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in info {
        let Some(c) = cells(line) else {
            inside = false;
            continue;
        };
        match c.first().copied() {
            Some("symbol") => inside = true,
            Some("function") => inside = false,
            Some(first) if inside && c.len() >= 2 && !first.starts_with('-') => {
                out.push((first.to_string(), c[1].to_string()))
            }
            _ => {}
        }
    }
    out
}

/// Rows of `vdsotime bench`: (function, speed-up over the syscall, vdsotime path).
pub fn ratios(bench: &[String]) -> Vec<(String, String, String)> {
    let mut columns: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for line in bench {
        let Some(c) = cells(line) else { continue };
        if c.first() == Some(&"function") {
            columns = c.iter().map(|s| s.to_string()).collect();
            continue;
        }
        let col = |name: &str| columns.iter().position(|c| c == name);
        if let (Some(s), Some(p)) = (col("speed-up"), col("vdsotime path")) {
            if let (Some(speedup), Some(path)) = (c.get(s), c.get(p)) {
                if !c[0].starts_with('-') {
                    out.push((c[0].to_string(), speedup.to_string(), path.to_string()));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn console_lines_become_runs_and_files() {
        let log = "boot noise\n@vm kernel 6.1.0-50-arm64\n@vm start a\n@vm out a | SKIP x: y\n\
                   [ 1.0] msg @vm end a PASS exit_status:_0 120ms\n@vm start b\n\
                   @vm hex v 0 7f454c\n@vm hex v 3 46\n@vm hexend v 4\n\
                   @vm hex w 0 00\n@vm hex w 9 00\n@vm hexend w 2\n@vm done\n";
        let c = parse(log);
        assert_eq!(c.release.as_deref(), Some("6.1.0-50-arm64"));
        let a = c.run("a").unwrap();
        assert_eq!((a.verdict.as_str(), a.millis), ("PASS", 120));
        assert_eq!(a.lines, ["SKIP x: y"]);
        assert_eq!(c.run("b").unwrap().verdict, "", "never ended");
        assert_eq!(c.files["v"], Ok(b"\x7fELF".to_vec()));
        assert!(c.files["w"].is_err());
        assert!(c.done);
    }

    #[test]
    fn info_symbols_and_bench_ratios() {
        let info: Vec<String> = "vDSO: 8192 bytes\n| symbol | version | address | offset |\n\
            |---|---|---|---|\n| __kernel_clock_gettime | LINUX_2.6.39 | 0x1 | 0x1 |\n\
            | function | path |\n| clock_gettime(CLOCK_REALTIME) | x |\n"
            .lines()
            .map(String::from)
            .collect();
        assert_eq!(
            symbols(&info),
            [(
                "__kernel_clock_gettime".to_string(),
                "LINUX_2.6.39".to_string()
            )]
        );
        let bench: Vec<String> = "| function | vdsotime | syscall | speed-up | vdsotime path |\n\
            |---|---|---|---|---|\n| clock_gettime(MONOTONIC) | 50 | 900 | 18.0x | __kernel_clock_gettime@LINUX_2.6.39 |\n"
            .lines()
            .map(String::from)
            .collect();
        let r = ratios(&bench);
        assert_eq!(r.len(), 1);
        assert_eq!(
            (r[0].0.as_str(), r[0].1.as_str()),
            ("clock_gettime(MONOTONIC)", "18.0x")
        );
    }
}
