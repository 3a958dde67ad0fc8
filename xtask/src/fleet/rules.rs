//! The shipped alert rules, read at run time: each alert's name, `for:` and expression, and
//! the copy the fleet machine's Prometheus loads, whose only change is shorter `for:`
//! values (Prometheus counts them in minutes; the machine must see alerts fire in seconds).
//! Every other byte, the expressions, labels and annotations, is the shipped file's.

/// One alerting rule of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alert {
    pub name: String,
    /// The expression as written (a folded `>-` expression is joined with spaces).
    pub expr: String,
    /// The shipped `for:` in seconds (0 when absent).
    pub for_seconds: u64,
}

/// Parses a Prometheus duration (`10m`, `90s`, `1h30m`) into seconds.
pub fn duration_seconds(text: &str) -> Option<u64> {
    let mut total = 0;
    let mut number = String::new();
    let mut chars = text.trim().chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let n: u64 = number.parse().ok()?;
        number.clear();
        let unit = match c {
            'm' if chars.peek() == Some(&'s') => {
                chars.next();
                0
            }
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'w' => 604_800,
            _ => return None,
        };
        total += n * unit;
    }
    number.is_empty().then_some(total)
}

/// The value of `key:` on `line` (after its indentation and an optional `- `).
fn value<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let t = line.trim_start();
    let t = t.strip_prefix("- ").unwrap_or(t);
    t.strip_prefix(key)?.strip_prefix(':').map(str::trim)
}

/// Every alerting rule of `text`, in order.
pub fn alerts(text: &str) -> Vec<Alert> {
    let mut out: Vec<Alert> = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(name) = value(line, "alert") {
            out.push(Alert {
                name: name.trim_matches('"').to_string(),
                expr: String::new(),
                for_seconds: 0,
            });
            continue;
        }
        let Some(alert) = out.last_mut() else {
            continue;
        };
        if let Some(v) = value(line, "for") {
            alert.for_seconds = duration_seconds(v.trim_matches('"')).unwrap_or(0);
        } else if let Some(v) = value(line, "expr") {
            if v.starts_with(['>', '|']) {
                // A block scalar: the lines indented deeper than `expr:`.
                let indent = line.len() - line.trim_start().len();
                let mut parts = Vec::new();
                while let Some(next) = lines.peek() {
                    if next.trim().is_empty() || next.len() - next.trim_start().len() > indent {
                        parts.push(next.trim());
                        lines.next();
                    } else {
                        break;
                    }
                }
                alert.expr = parts.join(" ").trim().to_string();
            } else {
                alert.expr = v.to_string();
            }
        }
    }
    out
}

/// The longest `for:` of the file's alerts, in seconds.
pub fn longest_for(text: &str) -> u64 {
    alerts(text)
        .iter()
        .map(|a| a.for_seconds)
        .max()
        .unwrap_or(0)
}

/// The copy with every `for:` of more than `seconds` set to `<seconds>s`; no other line
/// changes.
pub fn shortened(text: &str, seconds: u64) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let long = value(line, "for")
            .and_then(|v| duration_seconds(v.trim_matches('"')))
            .is_some_and(|s| s > seconds);
        if long {
            let indent = &line[..line.len() - line.trim_start().len()];
            let end = if line.ends_with('\n') { "\n" } else { "" };
            out.push_str(&format!("{indent}for: {seconds}s{end}"));
        } else {
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: &str = "groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up == 0\n        for: 10m\n        labels:\n          severity: warning\n      - alert: B\n        expr: >-\n          x\n          unless on(instance) y\n        for: 1h30m\n        annotations:\n          summary: \"for: 10m stays\"\n      - alert: C\n        expr: z > 0\n";

    #[test]
    fn durations_parse() {
        assert_eq!(duration_seconds("10m"), Some(600));
        assert_eq!(duration_seconds("1h30m"), Some(5400));
        assert_eq!(duration_seconds("15s"), Some(15));
        assert_eq!(duration_seconds("500ms"), Some(0));
        assert_eq!(duration_seconds("10"), None);
        assert_eq!(duration_seconds("10x"), None);
    }

    #[test]
    fn alerts_give_name_expr_and_for() {
        let a = alerts(RULES);
        assert_eq!(a.len(), 3);
        assert_eq!(
            (a[0].name.as_str(), a[0].expr.as_str(), a[0].for_seconds),
            ("A", "up == 0", 600)
        );
        assert_eq!(a[1].expr, "x unless on(instance) y");
        assert_eq!(a[1].for_seconds, 5400);
        assert_eq!(a[2].for_seconds, 0);
    }

    #[test]
    fn the_short_copy_changes_only_for_lines() {
        let short = shortened(RULES, 15);
        let (old, new): (Vec<_>, Vec<_>) = (RULES.lines().collect(), short.lines().collect());
        assert_eq!(old.len(), new.len());
        let changed: Vec<_> = old.iter().zip(&new).filter(|(a, b)| a != b).collect();
        assert_eq!(changed.len(), 2, "{changed:?}");
        assert!(changed.iter().all(|(_, b)| b.trim() == "for: 15s"));
        assert!(short.contains("summary: \"for: 10m stays\""));
        assert!(alerts(&short).iter().all(|a| a.for_seconds <= 15));
    }
}
