//! What a man page says beyond `--help`: sections of its own, the files its command uses,
//! and the other pages it refers to. A page without an entry gets only what `--help` says
//! (see `prose`) and SEE ALSO vdsotime(1).
//!
//! To add to a page, add (or extend) its entry, keyed by the page's name (`vdsotime` or
//! `vdsotime-SUBCOMMAND`): `sections` are (title, text) pairs written as `--help` prose
//! (paragraphs between blank lines, indented lines kept as they are), placed after OPTIONS;
//! `files` are (path, what it is) pairs for FILES; `see_also` names pages as `page(N)`.

use super::prose::Section;
use crate::doctor::findings::Code;

/// The additions to one page.
pub struct Extra {
    pub page: &'static str,
    pub sections: &'static [(&'static str, &'static str)],
    pub files: &'static [(&'static str, &'static str)],
    /// Said after the list of files (where another install puts them).
    pub files_note: &'static str,
    pub see_also: &'static [&'static str],
}

/// The doctor's systemd units and alert rules, as the Debian package installs them.
const FLEET_FILES: &[(&str, &str)] = &[
    (
        "/lib/systemd/system/vdsotime-doctor.service",
        "The doctor as a one-shot systemd service: it writes its metrics to \
         /var/lib/prometheus/node-exporter/vdsotime.prom, for node_exporter's textfile \
         collector, when that directory exists.",
    ),
    (
        "/lib/systemd/system/vdsotime-doctor.timer",
        "Starts the service every 5 minutes. Installed, not enabled: \
         systemctl enable --now vdsotime-doctor.timer.",
    ),
    (
        "/usr/share/vdsotime/vdsotime.rules.yml",
        "Prometheus alerting rules on the doctor's metrics.",
    ),
];

/// The doctor's files: the fleet's, and the documentation its unit and metrics point to.
const DOCTOR_FILES: &[(&str, &str)] = &[
    FLEET_FILES[0],
    FLEET_FILES[1],
    FLEET_FILES[2],
    (
        "/usr/share/doc/vdsotime/doctor.md",
        "The doctor: how it decides, the finding codes, the JSON document and the metrics.",
    ),
    (
        "/usr/share/doc/vdsotime/fleet.md",
        "vdsotime-doctor.service and .timer, the alert rules, and their rollout on a fleet.",
    ),
];

/// Where the project's install.sh puts the same files.
const FLEET_NOTE: &str = "These are the paths of the Debian package. The project's install.sh \
     puts the units in PREFIX/lib/systemd/system (for --prefix /usr: the installing system's \
     systemd unit directory, or /usr/lib/systemd/system when DESTDIR stages the install) and \
     the rules in PREFIX/share/vdsotime.";

/// Every page's additions.
pub const EXTRAS: &[Extra] = &[
    Extra {
        page: "vdsotime",
        sections: &[],
        files: FLEET_FILES,
        files_note: FLEET_NOTE,
        see_also: &[
            "libvdsotime(3)",
            "libvdsotime_preload(3)",
            "clock_gettime(2)",
            "vdso(7)",
        ],
    },
    Extra {
        page: "vdsotime-doctor",
        sections: &[],
        files: DOCTOR_FILES,
        files_note: FLEET_NOTE,
        see_also: &["systemd.timer(5)", "systemd.service(5)"],
    },
    Extra {
        page: "vdsotime-info",
        sections: &[],
        files: &[],
        files_note: "",
        see_also: &["vdso(7)", "getauxval(3)"],
    },
    Extra {
        page: "vdsotime-dump",
        sections: &[],
        files: &[],
        files_note: "",
        see_also: &["readelf(1)", "objdump(1)", "vdso(7)"],
    },
    Extra {
        page: "vdsotime-check",
        sections: &[],
        files: &[],
        files_note: "",
        see_also: &["clock_gettime(2)", "clock_getres(2)", "getcpu(2)"],
    },
    Extra {
        page: "vdsotime-bench",
        sections: &[],
        files: &[],
        files_note: "",
        see_also: &[
            "clock_gettime(2)",
            "gettimeofday(2)",
            "time(2)",
            "getcpu(2)",
        ],
    },
    Extra {
        page: "vdsotime-bench-getrandom",
        sections: &[],
        files: &[],
        files_note: "",
        see_also: &["getrandom(2)"],
    },
];

/// Sections made from the code's own lists, so they cannot drift from it: every finding
/// code on vdsotime-doctor(1).
pub fn generated(page: &str) -> Vec<Section> {
    if page != "vdsotime-doctor" {
        return Vec::new();
    }
    let intro = "Each finding has a stable code: in brackets in the text output, as code in \
                 the JSON document, and as the code label of vdsotime_findings in the metrics. \
                 Its severity and what to do: /usr/share/doc/vdsotime/doctor.md."
        .to_string();
    let codes = Code::ALL
        .iter()
        .map(|code| format!("{}: {}", code.as_str(), code.meaning()));
    vec![Section {
        title: "FINDING CODES".to_string(),
        paragraphs: std::iter::once(intro).chain(codes).collect(),
    }]
}

/// The additions to `page`, if it has any.
pub fn of(page: &str) -> Option<&'static Extra> {
    EXTRAS.iter().find(|e| e.page == page)
}
