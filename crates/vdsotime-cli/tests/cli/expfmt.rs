//! A strict parser of the Prometheus text exposition format (version 0.0.4), as the
//! node_exporter textfile collector reads it: every line ends in a newline; HELP and
//! TYPE come at most once per metric, before its samples; a metric's samples are
//! contiguous; names and label names are valid; label values use only the \\, \" and
//! \n escapes; values are floats; no series appears twice. Written for the tests, so
//! the doctor's output is checked by something other than the code that wrote it.

use std::collections::{BTreeMap, HashSet};

/// One sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

/// One metric family.
#[derive(Debug, Default)]
pub struct Family {
    pub help: Option<String>,
    pub kind: Option<String>,
    pub samples: Vec<Sample>,
}

fn valid_name(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_' || ch == ':')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == ':')
}

fn valid_label(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
        && !s.starts_with("__")
}

fn value(s: &str) -> Result<f64, String> {
    match s {
        "+Inf" | "Inf" => Ok(f64::INFINITY),
        "-Inf" => Ok(f64::NEG_INFINITY),
        "NaN" => Ok(f64::NAN),
        _ => s.parse().map_err(|_| format!("bad value {s:?}")),
    }
}

/// `{a="x",b="y"}` at the start of `s`: the labels and the rest of the line.
fn labels(s: &str) -> Result<(BTreeMap<String, String>, &str), String> {
    let mut out = BTreeMap::new();
    let mut rest = s.strip_prefix('{').ok_or("expected {")?;
    loop {
        if let Some(r) = rest.strip_prefix('}') {
            return Ok((out, r));
        }
        let eq = rest.find('=').ok_or("label without =")?;
        let name = &rest[..eq];
        if !valid_label(name) {
            return Err(format!("bad label name {name:?}"));
        }
        rest = rest[eq + 1..]
            .strip_prefix('"')
            .ok_or("label value without quote")?;
        let mut v = String::new();
        let mut chars = rest.char_indices();
        let end = loop {
            match chars.next() {
                Some((i, '"')) => break i,
                Some((_, '\\')) => match chars.next() {
                    Some((_, '\\')) => v.push('\\'),
                    Some((_, '"')) => v.push('"'),
                    Some((_, 'n')) => v.push('\n'),
                    other => return Err(format!("bad escape {other:?}")),
                },
                Some((_, '\n')) | None => return Err("unterminated label value".into()),
                Some((_, ch)) => v.push(ch),
            }
        };
        if out.insert(name.to_string(), v).is_some() {
            return Err(format!("label {name} twice"));
        }
        rest = &rest[end + 1..];
        if let Some(r) = rest.strip_prefix(',') {
            rest = r;
        } else if !rest.starts_with('}') {
            return Err("expected , or }".into());
        }
    }
}

/// Parses a whole exposition; any deviation is an error naming the line.
pub fn parse(text: &str) -> Result<BTreeMap<String, Family>, String> {
    if !text.is_empty() && !text.ends_with('\n') {
        return Err("the last line has no newline".into());
    }
    let mut families: BTreeMap<String, Family> = BTreeMap::new();
    let mut closed: HashSet<String> = HashSet::new();
    let mut current: Option<String> = None;
    let mut series = HashSet::new();
    for (n, line) in text.lines().enumerate() {
        let err = |e: String| format!("line {}: {e}: {line:?}", n + 1);
        let mut switch_to = |name: &str, families: &mut BTreeMap<String, Family>| {
            if current.as_deref() != Some(name) {
                if let Some(c) = current.take() {
                    closed.insert(c);
                }
                if closed.contains(name) {
                    return Err(format!("metric {name} is not contiguous"));
                }
                current = Some(name.to_string());
            }
            families.entry(name.to_string()).or_default();
            Ok(())
        };
        if let Some(rest) = line.strip_prefix('#') {
            let mut words = rest.trim_start().splitn(3, ' ');
            let (kw, name, tail) = (words.next(), words.next(), words.next());
            match (kw, name) {
                (Some("HELP"), Some(name)) | (Some("TYPE"), Some(name)) => {
                    if !valid_name(name) {
                        return Err(err(format!("bad metric name {name:?}")));
                    }
                    switch_to(name, &mut families).map_err(err)?;
                    let f = families.get_mut(name).unwrap();
                    if !f.samples.is_empty() {
                        return Err(err("HELP/TYPE after samples".into()));
                    }
                    let tail = tail.unwrap_or("").to_string();
                    if kw == Some("HELP") {
                        if f.help.replace(tail).is_some() {
                            return Err(err("HELP twice".into()));
                        }
                    } else {
                        if !["counter", "gauge", "histogram", "summary", "untyped"]
                            .contains(&tail.as_str())
                        {
                            return Err(err(format!("bad type {tail:?}")));
                        }
                        if f.kind.replace(tail).is_some() {
                            return Err(err("TYPE twice".into()));
                        }
                    }
                }
                _ => {} // a plain comment
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        let name_end = line
            .find(['{', ' '])
            .ok_or_else(|| err("no value".into()))?;
        let name = &line[..name_end];
        if !valid_name(name) {
            return Err(err(format!("bad metric name {name:?}")));
        }
        let (labels, rest) = if line[name_end..].starts_with('{') {
            labels(&line[name_end..]).map_err(err)?
        } else {
            (BTreeMap::new(), &line[name_end..])
        };
        let mut fields = rest.split_whitespace();
        let v = value(fields.next().ok_or_else(|| err("no value".into()))?).map_err(err)?;
        if let Some(ts) = fields.next() {
            ts.parse::<i64>().map_err(|_| err("bad timestamp".into()))?;
        }
        if fields.next().is_some() {
            return Err(err("trailing fields".into()));
        }
        switch_to(name, &mut families).map_err(err)?;
        if !series.insert((name.to_string(), format!("{labels:?}"))) {
            return Err(err("duplicate series".into()));
        }
        families.get_mut(name).unwrap().samples.push(Sample {
            name: name.to_string(),
            labels,
            value: v,
        });
    }
    Ok(families)
}

#[test]
fn the_parser_rejects_what_it_should() {
    assert!(parse("a 1\n").is_ok());
    assert!(parse("a{b=\"x\\\"y\"} 1.5e-9\n").is_ok());
    for bad in [
        "a 1",                    // no final newline
        "a{b=\"x\"} one\n",       // not a float
        "a{b=\"x\\q\"} 1\n",      // bad escape
        "a{b=\"x\",b=\"y\"} 1\n", // label twice
        "1a 1\n",                 // bad name
        "a{__b=\"x\"} 1\n",       // reserved label name
        "a 1\nb 1\na 2\n",        // not contiguous
        "a 1\na 1\n",             // duplicate series
        "a 1\n# HELP a late\n",   // HELP after samples
        "# TYPE a gauge\n# TYPE a gauge\na 1\n",
        "# TYPE a gaugey\na 1\n",
    ] {
        assert!(parse(bad).is_err(), "accepted {bad:?}");
    }
}
