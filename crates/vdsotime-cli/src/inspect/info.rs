//! `vdsotime info`: what the kernel mapped, what it exports, and which path each
//! library function takes on this machine.

use serde::Serialize;
use vdsotime::{ElfClass, Endian, Function};

use crate::facts::{self, SystemFacts};
use crate::names;
use crate::output;

/// One exported vDSO symbol.
#[derive(Debug, Serialize)]
pub struct SymbolInfo {
    /// Symbol name.
    pub name: String,
    /// Version node, if the image has versions.
    pub version: Option<String>,
    /// Run-time address (hex).
    pub address: String,
    /// Offset in the image.
    pub offset: usize,
}

/// The mapped vDSO image.
#[derive(Debug, Serialize)]
pub struct VdsoInfo {
    /// Address of the ELF header (hex).
    pub address: String,
    /// Bytes in the image.
    pub size: usize,
    /// `ELF32` or `ELF64`.
    pub class: &'static str,
    /// `little` or `big`.
    pub endian: &'static str,
    /// e_machine.
    pub machine: u16,
    /// e_machine as a name.
    pub machine_name: &'static str,
    /// The library's table for this machine, if it has one.
    pub arch_table: Option<&'static str>,
    /// DT_GNU_HASH present.
    pub gnu_hash: bool,
    /// DT_HASH present.
    pub sysv_hash: bool,
    /// DT_VERSYM/DT_VERDEF present.
    pub versions: bool,
    /// Exported functions.
    pub symbols: Vec<SymbolInfo>,
}

/// Which path one function takes.
#[derive(Debug, Serialize)]
pub struct PathInfo {
    /// C function name.
    pub function: &'static str,
    /// Clock argument, if any.
    pub clock: Option<String>,
    /// `symbol@version` or `syscall`.
    pub path: String,
}

/// How the vDSO's getrandom wants its states, as its probe call reported.
#[derive(Debug, Serialize)]
pub struct GetrandomInfo {
    /// `symbol@version`.
    pub symbol: String,
    /// Bytes of one state (`size_of_opaque_state`).
    pub state_size: usize,
    /// `mmap` protection for state memory, and its names.
    pub mmap_prot: u32,
    /// `mmap` flags for state memory.
    pub mmap_flags: u32,
    /// Both, named (`PROT_READ|PROT_WRITE`, `MAP_DROPPABLE|MAP_ANONYMOUS`).
    pub mmap_names: String,
    /// The page size; states never cross a page.
    pub page_size: usize,
    /// States vdsotime carves from one page.
    pub states_per_page: usize,
}

/// The whole `info` document.
#[derive(Debug, Serialize)]
pub struct Info {
    /// Machine facts.
    pub system: SystemFacts,
    /// The vDSO, or null when the process has none (valgrind, vdso=0).
    pub vdso: Option<VdsoInfo>,
    /// The vDSO's getrandom, or null where getrandom is the system call.
    pub getrandom: Option<GetrandomInfo>,
    /// Path per function.
    pub paths: Vec<PathInfo>,
}

/// The names of the set bits of `value` among `names`, joined by `|`.
fn bit_names(value: u32, names: &[(u32, &str)]) -> String {
    let mut out: Vec<String> = names
        .iter()
        .filter(|(bit, _)| value & bit != 0)
        .map(|(_, n)| n.to_string())
        .collect();
    let rest = names.iter().fold(value, |v, (bit, _)| v & !bit);
    if rest != 0 || out.is_empty() {
        out.push(format!("{rest:#x}"));
    }
    out.join("|")
}

/// The vDSO getrandom's state parameters, if the vDSO serves getrandom.
pub fn getrandom_info() -> Option<GetrandomInfo> {
    let p = vdsotime::random::params()?;
    let prot = bit_names(
        p.mmap_prot,
        &[(1, "PROT_READ"), (2, "PROT_WRITE"), (4, "PROT_EXEC")],
    );
    let flags = bit_names(
        p.mmap_flags,
        &[
            (0x01, "MAP_SHARED"),
            (0x02, "MAP_PRIVATE"),
            (0x08, "MAP_DROPPABLE"),
            (0x20, "MAP_ANONYMOUS"),
        ],
    );
    Some(GetrandomInfo {
        symbol: vdsotime::path(Function::Getrandom).to_string(),
        state_size: p.state_size,
        mmap_prot: p.mmap_prot,
        mmap_flags: p.mmap_flags,
        mmap_names: format!("{prot}, {flags}"),
        page_size: p.page_size,
        states_per_page: p.per_page().min(64),
    })
}

/// Reads the vDSO summary.
pub fn vdso_info() -> Option<VdsoInfo> {
    let v = vdsotime::vdso()?;
    let mut symbols: Vec<SymbolInfo> = v
        .symbols()
        .map(|s| SymbolInfo {
            name: s.name.to_string(),
            version: s.version.map(str::to_string),
            address: format!("{:#x}", s.address),
            offset: s.offset,
        })
        .collect();
    symbols.sort_by(|a, b| a.name.cmp(&b.name));
    Some(VdsoInfo {
        address: format!("{:#x}", v.base()),
        size: v.bytes().len(),
        class: match v.class() {
            ElfClass::Elf32 => "ELF32",
            ElfClass::Elf64 => "ELF64",
        },
        endian: match v.endian() {
            Endian::Little => "little",
            Endian::Big => "big",
        },
        machine: v.machine(),
        machine_name: names::machine_name(v.machine()),
        arch_table: v.arch().map(|a| a.name),
        gnu_hash: v.has_gnu_hash(),
        sysv_hash: v.has_sysv_hash(),
        versions: v.has_versions(),
        symbols,
    })
}

/// The path of every function, as the library resolved it.
pub fn paths(functions: &[Function]) -> Vec<PathInfo> {
    functions
        .iter()
        .map(|&f| PathInfo {
            function: names::function_name(f),
            clock: names::function_clock(f).map(names::clock_full),
            path: vdsotime::path(f).to_string(),
        })
        .collect()
}

/// Collects the whole document.
pub fn collect() -> Info {
    Info {
        system: facts::collect(),
        vdso: vdso_info(),
        getrandom: getrandom_info(),
        paths: paths(&names::all_functions()),
    }
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// Prints the vDSO header, symbols and paths; `full` lists every symbol and every clock's
/// path, otherwise (the default run's summary) the symbols are counted and the clocks that
/// share a path are folded into one line.
pub fn print_vdso(info: &Info, full: bool) {
    match &info.vdso {
        None => println!("vDSO: none (AT_SYSINFO_EHDR is 0: valgrind, vdso=0, or a sandbox); every call uses the syscall"),
        Some(v) => {
            println!(
                "vDSO: {} bytes at {}, {} {}-endian {} (e_machine {}), table {}",
                v.size,
                v.address,
                v.class,
                v.endian,
                v.machine_name,
                v.machine,
                v.arch_table.unwrap_or("none")
            );
            println!(
                "  hash tables: DT_GNU_HASH {}, DT_HASH {}; symbol versions {}",
                yes_no(v.gnu_hash),
                yes_no(v.sysv_hash),
                yes_no(v.versions)
            );
            if full {
                let mut t = output::table(&["symbol", "version", "address", "offset"]);
                for s in &v.symbols {
                    t.add_row(vec![
                        s.name.clone(),
                        s.version.clone().unwrap_or_else(|| "-".into()),
                        s.address.clone(),
                        format!("{:#x}", s.offset),
                    ]);
                }
                println!("{t}");
            } else {
                println!(
                    "  {} symbols (vdsotime info lists them)",
                    v.symbols.len()
                );
            }
        }
    }
    match &info.getrandom {
        Some(g) => println!(
            "getrandom: {}, {}-byte states in {} memory, {} per {}-byte page, one per thread",
            g.symbol, g.state_size, g.mmap_names, g.states_per_page, g.page_size
        ),
        None => println!("getrandom: the system call (no vDSO getrandom: Linux before 6.11, or a 32-bit process)"),
    }
    let mut t = output::table(&["function", "path"]);
    let mut seen = std::collections::BTreeSet::new();
    for p in &info.paths {
        // The summary folds clocks that share a path into one line per function.
        let key = (p.function, p.path.clone());
        if !full && !seen.insert(key) {
            continue;
        }
        let label = match (&p.clock, full) {
            (Some(c), true) => format!("{}({})", p.function, names::clock_label(c)),
            (Some(_), false) => format!("{}(...)", p.function),
            (None, _) => format!("{}()", p.function),
        };
        let clocks_on_path: Vec<&str> = info
            .paths
            .iter()
            .filter(|q| q.function == p.function && q.path == p.path)
            .filter_map(|q| q.clock.as_deref())
            .map(names::clock_label)
            .collect();
        let clocks_of_function = info
            .paths
            .iter()
            .filter(|q| q.function == p.function)
            .count();
        let path = if full || clocks_on_path.is_empty() {
            p.path.clone()
        } else if clocks_on_path.len() == clocks_of_function {
            format!("{} (every clock)", p.path)
        } else {
            format!("{} ({})", p.path, clocks_on_path.join(" "))
        };
        t.add_row(vec![label, path]);
    }
    println!("{t}");
}

/// Prints the machine facts.
pub fn print_system(s: &SystemFacts) {
    println!(
        "kernel {} ({}), page size {} bytes, {} CPU(s) usable: {}",
        s.kernel_release,
        s.machine,
        s.page_size,
        s.cpus,
        s.cpu_model.as_deref().unwrap_or("unknown model")
    );
    println!(
        "clocksource: {} (available: {})",
        s.clocksource.as_deref().unwrap_or("unknown"),
        if s.clocksources_available.is_empty() {
            "unknown".to_string()
        } else {
            s.clocksources_available.join(" ")
        }
    );
    if s.cpu_flags.known {
        let f = &s.cpu_flags;
        println!(
            "cpu flags: constant_tsc {}, nonstop_tsc {}, rdtscp {}, tsc_known_freq {}",
            yes_no(f.constant_tsc),
            yes_no(f.nonstop_tsc),
            yes_no(f.rdtscp),
            yes_no(f.tsc_known_freq)
        );
    }
    println!(
        "hypervisor: {}{}",
        s.hypervisor.as_deref().unwrap_or("none detected"),
        s.dmi_product
            .as_deref()
            .map(|p| format!(" (DMI product: {p})"))
            .unwrap_or_default()
    );
    let offsets: Vec<String> = s
        .timens_offsets
        .iter()
        .map(|o| format!("{} {}s {}ns", o.clock, o.secs, o.nsecs))
        .collect();
    println!(
        "time namespace offsets: {}",
        if offsets.is_empty() {
            "unreadable".to_string()
        } else {
            offsets.join(", ")
        }
    );
    match s.tsc_marked_unstable {
        Some(true) => println!("kernel log: TSC marked unstable"),
        Some(false) => println!("kernel log: no TSC instability reported"),
        None => println!("kernel log: unreadable (needs CAP_SYSLOG)"),
    }
}

/// Options of `info`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "Examples:
  vdsotime info
  vdsotime info --json | jq '.vdso.symbols[].name'")]
pub struct InfoArgs {
    /// Write everything as one JSON document (kernel, vdso, paths, clocksources, cpu).
    #[arg(long)]
    pub json: bool,
}

/// Runs `vdsotime info`.
pub fn run(json: bool) -> output::Exit {
    let info = collect();
    if json {
        output::print_json(&info)?;
    } else {
        print_system(&info.system);
        print_vdso(&info, true);
    }
    Ok(0)
}
