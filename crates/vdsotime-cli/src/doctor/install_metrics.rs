//! `doctor --install-metrics SRC --output DST`: the privileged half of the service. The
//! doctor runs unprivileged and writes its metrics into its own runtime directory; this
//! step, run as root by `ExecStartPost=+`, checks that SRC is a whole metrics document
//! and installs it as DST through [`super::replace_file`]: a temporary
//! name node_exporter ignores, flushed to disk, mode 0644, owned by the caller, renamed.
//! The unprivileged part never holds write access to the shared textfile directory.

use std::path::Path;

use super::replace_file;

/// How the line naming a judged profile starts (after `# ` in a metrics document).
pub const HEADER_START: &str = "doctor: ";

/// The first bytes of every document `doctor --format prometheus` writes.
const HEAD: &str = "# HELP vdsotime_doctor_info ";

/// Whether `text` is a whole metrics document of the doctor: its first family (after the
/// comment that names a saved profile, when one was judged), and a last line that ends.
fn whole(text: &str) -> bool {
    let body = text
        .strip_prefix("# ")
        .and_then(|rest| rest.strip_prefix(HEADER_START))
        .and_then(|rest| rest.split_once('\n'))
        .map_or(text, |(_, body)| body);
    body.starts_with(HEAD) && text.ends_with('\n')
}

/// Installs the metrics in `src` as `dst`; on any error `dst` keeps its contents.
pub fn install(src: &Path, dst: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(src).map_err(|e| {
        format!(
            "cannot read {}: {e} ({} left unchanged)",
            src.display(),
            dst.display()
        )
    })?;
    if !whole(&text) {
        return Err(format!(
            "{}: not a whole `vdsotime doctor --format prometheus` document ({} left unchanged)",
            src.display(),
            dst.display()
        ));
    }
    replace_file::replace(dst, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_whole_document_is_installed() {
        assert!(whole(
            "# HELP vdsotime_doctor_info x\nvdsotime_doctor_info 1\n"
        ));
        assert!(!whole("# HELP vdsotime_doctor_info x\nvdsotime_doc"));
        assert!(!whole(""));
        assert!(whole(
            "# doctor: judging the saved profile p.json, taken on Linux 6.1 (x86_64)\n\
             # HELP vdsotime_doctor_info x\nvdsotime_doctor_info 1\n"
        ));
        assert!(!whole("# doctor: judging\n"));
        assert!(!whole("node_cpu 1\n"));
    }
}
