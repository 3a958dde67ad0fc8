//! What `VDSOTIME_PRELOAD_DEBUG` asks for: nothing, one line per process or the full table,
//! on standard error or appended to a file.
//!
//! | value | report |
//! | --- | --- |
//! | unset, empty, `0` | none |
//! | `all` | the full table, on standard error |
//! | `file:PATH` | one line, appended to PATH |
//! | `all,file:PATH` | the full table, appended to PATH |
//! | anything else (`1`) | one line, on standard error |

use core::ffi::CStr;

/// How much the report says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detail {
    /// One line per process: the program, how many names it binds here, the main path.
    Line,
    /// Every name's binding and every function's path, one line each.
    Table,
}

/// A parsed, non-empty setting. `file` borrows the tail of the environment string, which
/// is NUL-terminated, so it can be passed to open(2) as it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setting<'a> {
    pub detail: Detail,
    /// Append to this file instead of writing to standard error.
    pub file: Option<&'a CStr>,
}

/// The prefix of a file destination.
const FILE: &[u8] = b"file:";

/// Parses the variable's value; None turns the report off.
pub fn parse(value: &CStr) -> Option<Setting<'_>> {
    let bytes = value.to_bytes_with_nul();
    match value.to_bytes() {
        b"" | b"0" => return None,
        b"all" => {
            return Some(Setting {
                detail: Detail::Table,
                file: None,
            })
        }
        _ => {}
    }
    let (detail, rest) = match bytes.strip_prefix(b"all,".as_slice()) {
        Some(rest) => (Detail::Table, rest),
        None => (Detail::Line, bytes),
    };
    let file = rest
        .strip_prefix(FILE)
        .and_then(|path| CStr::from_bytes_with_nul(path).ok());
    Some(Setting { detail, file })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(detail: Detail, file: Option<&CStr>) -> Option<Setting<'_>> {
        Some(Setting { detail, file })
    }

    #[test]
    fn values() {
        assert_eq!(parse(c""), None);
        assert_eq!(parse(c"0"), None);
        assert_eq!(parse(c"1"), setting(Detail::Line, None));
        assert_eq!(parse(c"yes"), setting(Detail::Line, None));
        assert_eq!(parse(c"all"), setting(Detail::Table, None));
        assert_eq!(
            parse(c"file:/tmp/a,b"),
            setting(Detail::Line, Some(c"/tmp/a,b"))
        );
        assert_eq!(
            parse(c"all,file:/tmp/x"),
            setting(Detail::Table, Some(c"/tmp/x"))
        );
        // An empty path is kept: opening it fails, and that failure is reported.
        assert_eq!(parse(c"file:"), setting(Detail::Line, Some(c"")));
        // Anything after "all," that is not a file destination is still the table.
        assert_eq!(parse(c"all,x"), setting(Detail::Table, None));
    }
}
