//! The alerts the guest read from Prometheus' `/api/v1/alerts`, one per line as
//! `name<TAB>state<TAB>labels<TAB>annotations` (the labels and annotations as JSON
//! objects), and the sampled snapshots (each line prefixed with its time).

use std::collections::BTreeSet;

use crate::kernels::json;

/// One alert as Prometheus listed it.
#[derive(Debug, Clone, PartialEq)]
pub struct Alert {
    pub name: String,
    /// `pending` or `firing`.
    pub state: String,
    pub labels: json::Value,
    pub annotations: json::Value,
}

impl Alert {
    /// The label's value ("" when absent).
    pub fn label(&self, key: &str) -> &str {
        self.labels.str_at(key)
    }

    /// `Name{label="value", ...}` for the report.
    pub fn show(&self) -> String {
        let labels = match &self.labels {
            json::Value::Object(m) => m
                .iter()
                .filter(|(k, _)| k.as_str() != "alertname")
                .map(|(k, v)| format!("{k}=\"{}\"", v.as_str().unwrap_or("?")))
                .collect::<Vec<_>>()
                .join(", "),
            _ => String::new(),
        };
        format!("{}{{{labels}}} {}", self.name, self.state)
    }
}

/// Parses one `name<TAB>state<TAB>labels<TAB>annotations` line.
fn parse_line(line: &str) -> Option<Alert> {
    let mut f = line.split('\t');
    let (name, state) = (f.next()?, f.next()?);
    let labels = json::parse(&unescape(f.next()?)).ok()?;
    let annotations = json::parse(&unescape(f.next().unwrap_or("{}"))).ok()?;
    Some(Alert {
        name: name.to_string(),
        state: state.to_string(),
        labels,
        annotations,
    })
}

/// Undoes jq's `@tsv` escapes (`\\`, `\t`, `\n`, `\r`).
fn unescape(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// Every alert of a snapshot; the error names a line that does not parse.
pub fn snapshot(text: &str) -> Result<Vec<Alert>, String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| parse_line(l).ok_or_else(|| format!("unreadable alert line: {l}")))
        .collect()
}

/// The names of the alerts that were firing in any sampled snapshot (`<time><TAB><alert
/// line>` lines).
pub fn ever_firing(samples: &str) -> BTreeSet<String> {
    samples
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .filter_map(|(_, alert)| parse_line(alert))
        .filter(|a| a.state == "firing")
        .map(|a| a.name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = "VdsotimeX\tfiring\t{\"alertname\":\"VdsotimeX\",\"clocksource\":\"hpet\",\"instance\":\"localhost:9100\"}\t{\"summary\":\"a\\\\tb\"}";

    #[test]
    fn lines_give_name_state_and_labels() {
        let a = snapshot(&format!("{LINE}\n\n")).unwrap();
        assert_eq!(a.len(), 1);
        assert_eq!(
            (a[0].name.as_str(), a[0].state.as_str()),
            ("VdsotimeX", "firing")
        );
        assert_eq!(a[0].label("clocksource"), "hpet");
        assert_eq!(a[0].label("missing"), "");
        assert_eq!(
            a[0].show(),
            "VdsotimeX{clocksource=\"hpet\", instance=\"localhost:9100\"} firing"
        );
        assert!(snapshot("garbage").is_err());
    }

    #[test]
    fn samples_give_every_alert_that_fired() {
        let pending = LINE.replace("VdsotimeX\tfiring", "VdsotimeY\tpending");
        let samples = format!("1\t{LINE}\n2\t{pending}\n3\t\n");
        assert_eq!(
            ever_firing(&samples).into_iter().collect::<Vec<_>>(),
            ["VdsotimeX"]
        );
    }
}
