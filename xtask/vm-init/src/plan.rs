//! The plan the host writes to `/plan`: one step a line, fields separated by tabs.
//!
//! ```text
//! env     KEY      VALUE                               environment of every later program
//! run     LABEL    TIMEOUT_S  MODE  PROGRAM  ARGS...   MODE: tests (SKIP lines, results,
//!                                                      the tail on failure) or show (all)
//! hex     LABEL    PATH                                a file, hex-encoded, to the console
//! expect  LABEL    TEXT                                an error line unless a line of the
//!                                                      last LABEL run's output contains TEXT
//! ```

use std::time::Duration;

/// What to print of a program's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A libtest binary: SKIP lines and `test result:` lines; everything's tail on failure.
    Tests,
    /// Every line.
    Show,
}

/// One step of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Env {
        key: String,
        value: String,
    },
    Run {
        label: String,
        timeout: Duration,
        mode: Mode,
        argv: Vec<String>,
    },
    Hex {
        label: String,
        path: String,
    },
    Expect {
        label: String,
        text: String,
    },
}

/// Parses the whole plan; an error names the line.
pub fn parse(text: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let bad = || format!("line {}: {line:?}", n + 1);
        let step = match fields[..] {
            ["env", key, value] => Step::Env {
                key: key.to_string(),
                value: value.to_string(),
            },
            ["run", label, timeout, mode, ref argv @ ..] if !argv.is_empty() => Step::Run {
                label: label.to_string(),
                timeout: Duration::from_secs(timeout.parse().map_err(|_| bad())?),
                mode: match mode {
                    "tests" => Mode::Tests,
                    "show" => Mode::Show,
                    _ => return Err(bad()),
                },
                argv: argv.iter().map(|s| s.to_string()).collect(),
            },
            ["hex", label, path] => Step::Hex {
                label: label.to_string(),
                path: path.to_string(),
            },
            ["expect", label, text] if !text.is_empty() => Step::Expect {
                label: label.to_string(),
                text: text.to_string(),
            },
            _ => return Err(bad()),
        };
        steps.push(step);
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_parse_and_bad_lines_are_named() {
        let plan =
            "# comment\nenv\tA\tb c\nrun\tkp\t60\ttests\t/bin/kp\t--skip\tx\n\nhex\tvdso\t/tmp/v\n";
        let steps = parse(plan).unwrap();
        assert_eq!(steps.len(), 3);
        assert_eq!(
            parse("expect\tdoctor\tserved").unwrap(),
            [Step::Expect {
                label: "doctor".into(),
                text: "served".into()
            }]
        );
        assert!(parse("expect\tdoctor\t").is_err());
        assert_eq!(
            steps[1],
            Step::Run {
                label: "kp".into(),
                timeout: Duration::from_secs(60),
                mode: Mode::Tests,
                argv: vec!["/bin/kp".into(), "--skip".into(), "x".into()],
            }
        );
        assert!(parse("run\tx\tsoon\ttests\t/a")
            .unwrap_err()
            .contains("line 1"));
        assert!(parse("run\tx\t5\tweird\t/a").is_err());
        assert!(parse("run\tx\t5\ttests").is_err());
        assert!(parse("frobnicate").is_err());
    }
}
