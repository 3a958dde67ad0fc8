//! The prose of a command's `--help`, its long about and its `after_help`, sorted into the
//! sections of its man page, so that `--help` and the page say the same thing.
//!
//! A paragraph (text between blank lines) goes to DESCRIPTION unless it starts with:
//! - the name of a standard section and a colon (`Exit status: 0 success, ...`,
//!   `Examples:`, `Environment:`, `Files:`, `Notes:`, `Bugs:`, `See also:`): it goes to that
//!   section, without the name;
//! - a short title alone on its line (`Finding codes:`, at most three words, no comma): it
//!   becomes a section of that title, after OPTIONS.
//!
//! The long about's first paragraph is the about, which NAME already says: it is left out.

/// One section of a page: its title (upper case) and its paragraphs, as written.
#[derive(Debug, PartialEq, Eq)]
pub struct Section {
    pub title: String,
    pub paragraphs: Vec<String>,
}

/// The standard sections a paragraph can name, in the order man-pages(7) gives them.
pub const STANDARD: &[&str] = &[
    "Exit status",
    "Environment",
    "Files",
    "Notes",
    "Bugs",
    "Examples",
    "See also",
];

/// The sections of one command: DESCRIPTION first (when there is any prose for it), then
/// every other title in the order it first appears.
pub fn sections(about: &str, long_about: Option<&str>, after_help: Option<&str>) -> Vec<Section> {
    let mut out = vec![Section {
        title: "DESCRIPTION".into(),
        paragraphs: Vec::new(),
    }];
    let long = paragraphs(long_about.unwrap_or(""));
    let skip = usize::from(long.first().is_some_and(|p| same_words(p, about)));
    for paragraph in long.into_iter().skip(skip) {
        add(&mut out, "DESCRIPTION".into(), paragraph);
    }
    for paragraph in paragraphs(after_help.unwrap_or("")) {
        let (title, body) = classify(&paragraph);
        add(&mut out, title, body);
    }
    out.retain(|s| !s.paragraphs.is_empty());
    out
}

/// Whether two texts have the same words, ignoring a final period and line breaks.
fn same_words(a: &str, b: &str) -> bool {
    let words = |s: &str| {
        s.trim_end_matches('.')
            .split_whitespace()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    words(a) == words(b)
}

/// The paragraphs of a text: runs of lines between blank lines, trailing space trimmed.
fn paragraphs(text: &str) -> Vec<String> {
    text.split("\n\n")
        .map(|p| p.trim_matches('\n').trim_end().to_string())
        .filter(|p| !p.trim().is_empty())
        .collect()
}

/// The section a paragraph belongs to, and the paragraph without its heading.
fn classify(paragraph: &str) -> (String, String) {
    let (first, rest) = paragraph.split_once('\n').unwrap_or((paragraph, ""));
    for name in STANDARD {
        let Some(after) = strip_prefix_ignore_case(first, name).and_then(|a| a.strip_prefix(':'))
        else {
            continue;
        };
        let body = match (after.trim(), rest) {
            ("", rest) => rest.to_string(),
            (text, "") => text.to_string(),
            (text, rest) => format!("{text}\n{rest}"),
        };
        return (name.to_uppercase(), body);
    }
    let title = first.strip_suffix(':').unwrap_or("");
    let short_title = !title.is_empty()
        && !title.starts_with(' ')
        && title.split_whitespace().count() <= 3
        && !title.contains([',', '(', '.', '`']);
    if short_title && !rest.trim().is_empty() {
        return (title.to_uppercase(), rest.to_string());
    }
    ("DESCRIPTION".into(), paragraph.to_string())
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| text.get(prefix.len()..))
        .flatten()
}

/// Appends a paragraph to the section `title`, adding the section if it is new.
fn add(sections: &mut Vec<Section>, title: String, paragraph: String) {
    match sections.iter_mut().find(|s| s.title == title) {
        Some(section) => section.paragraphs.push(paragraph),
        None => sections.push(Section {
            title,
            paragraphs: vec![paragraph],
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn titles(sections: &[Section]) -> Vec<&str> {
        sections.iter().map(|s| s.title.as_str()).collect()
    }

    #[test]
    fn prose_goes_to_description_and_headed_paragraphs_to_their_sections() {
        let after = "How it decides: a child forbids the calls.\n\n\
                     Exit status: 0 healthy,\n2 degraded.\n\n\
                     Examples:\n  vdsotime doctor\n  vdsotime doctor --json\n\n\
                     Finding codes:\n  no_vdso  the kernel maps no vDSO\n\n\
                     Checks, for every clock (and time):\n  - one\n  - two";
        let s = sections("Say whether it works.", None, Some(after));
        assert_eq!(
            titles(&s),
            ["DESCRIPTION", "EXIT STATUS", "EXAMPLES", "FINDING CODES"]
        );
        assert_eq!(
            s[0].paragraphs,
            [
                "How it decides: a child forbids the calls.",
                "Checks, for every clock (and time):\n  - one\n  - two"
            ]
        );
        assert_eq!(s[1].paragraphs, ["0 healthy,\n2 degraded."]);
        assert_eq!(
            s[2].paragraphs,
            ["  vdsotime doctor\n  vdsotime doctor --json"]
        );
        assert_eq!(s[3].paragraphs, ["  no_vdso  the kernel maps no vDSO"]);
    }

    #[test]
    fn the_long_about_loses_the_paragraph_name_already_says() {
        let s = sections(
            "Write the vDSO image.",
            Some("Write the vDSO image\n\nThe image is the kernel's, byte for byte."),
            None,
        );
        assert_eq!(titles(&s), ["DESCRIPTION"]);
        assert_eq!(
            s[0].paragraphs,
            ["The image is the kernel's, byte for byte."]
        );
        // Nothing but the about: no DESCRIPTION at all, rather than NAME again.
        assert!(sections("Write it.", Some("Write it."), Some("Examples:\n  x")).len() == 1);
    }
}
