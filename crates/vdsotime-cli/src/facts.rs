//! Facts about the machine that decide whether the vDSO can serve a clock: kernel,
//! clocksource, TSC flags, hypervisor, time namespace. Read from /proc and /sys only;
//! every reader tolerates a missing file (containers, other architectures).

use std::fs;
use std::io::Read;

use serde::{Deserialize, Serialize};

const CLOCKSOURCE_DIR: &str = "/sys/devices/system/clocksource/clocksource0";

/// The CPU flags from /proc/cpuinfo that matter for a TSC-based vDSO.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct CpuFlags {
    /// /proc/cpuinfo had a `flags` line (x86 only).
    pub known: bool,
    /// The CPU has a TSC at all.
    #[serde(default)]
    pub tsc: bool,
    /// TSC ticks at a constant rate whatever the frequency.
    pub constant_tsc: bool,
    /// TSC keeps ticking in deep C-states.
    pub nonstop_tsc: bool,
    /// The RDTSCP instruction exists.
    pub rdtscp: bool,
    /// The TSC frequency came from CPUID/MSR, not calibration.
    pub tsc_known_freq: bool,
    /// Running under a hypervisor (CPUID bit 31 of ECX).
    pub hypervisor: bool,
}

/// One line of /proc/self/timens_offsets.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct TimensOffset {
    /// `monotonic` or `boottime`.
    pub clock: String,
    /// Seconds added to the host's clock.
    pub secs: i64,
    /// Nanoseconds added.
    pub nsecs: i64,
}

/// Everything the tool reads about the machine.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct SystemFacts {
    /// `uname -r`.
    pub kernel_release: String,
    /// `uname -m`.
    pub machine: String,
    /// The page size in bytes.
    pub page_size: u64,
    /// The CPU model from /proc/cpuinfo.
    pub cpu_model: Option<String>,
    /// CPUs this process may run on.
    pub cpus: usize,
    /// current_clocksource.
    pub clocksource: Option<String>,
    /// available_clocksource.
    pub clocksources_available: Vec<String>,
    /// TSC-related CPU flags.
    pub cpu_flags: CpuFlags,
    /// Hypervisor name, if one was detected.
    pub hypervisor: Option<String>,
    /// /sys/class/dmi/id/product_name.
    pub dmi_product: Option<String>,
    /// Time-namespace offsets (all zero outside a time namespace).
    pub timens_offsets: Vec<TimensOffset>,
    /// Whether the kernel log says "Marking TSC unstable"; `None` if unreadable.
    pub tsc_marked_unstable: Option<bool>,
    /// Why, as the kernel log says it ("boot parameter", "clocksource watchdog", ...).
    #[serde(default)]
    pub tsc_unstable_reason: Option<String>,
    /// /proc/cmdline: the kernel's boot parameters (`vdso=0`, `clocksource=`, `tsc=`).
    #[serde(default)]
    pub kernel_cmdline: Option<String>,
    /// The tool this process runs under, where it shows (`valgrind`, whose preload
    /// library is in LD_PRELOAD).
    #[serde(default)]
    pub emulator: Option<String>,
    /// The enabled auxiliary clocks (`AUX0`, ...), or `None` when the kernel has none
    /// (no /sys/kernel/time/aux_clocks).
    #[serde(default)]
    pub aux_clocks_enabled: Option<Vec<String>>,
}

impl SystemFacts {
    /// The value of boot parameter `name` (`Some("")` for a bare flag), the last one
    /// given winning as in the kernel.
    pub fn boot_param(&self, name: &str) -> Option<&str> {
        self.kernel_cmdline
            .as_deref()?
            .split_whitespace()
            .take_while(|w| *w != "--") // what follows is init's
            .filter_map(|w| match w.split_once('=') {
                Some((k, v)) if k == name => Some(v),
                None if w == name => Some(""),
                _ => None,
            })
            .last()
    }
}

fn read_trimmed(path: &str) -> Option<String> {
    let s = fs::read_to_string(path).ok()?;
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

fn uname() -> (String, String) {
    // SAFETY: utsname is plain old data; all-zero is a valid value.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return (String::new(), String::new());
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c.to_ne_bytes()[0]) // c_char is i8 or u8 by architecture
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    (field(&u.release), field(&u.machine))
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(n).unwrap_or(0)
}

/// The CPUs this process may run on, in order.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain old data; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is valid for writes of size_of::<cpu_set_t>() bytes.
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r != 0 {
        return vec![0];
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `i` is below CPU_SETSIZE, the capacity of `set`.
        .filter(|&i| unsafe { libc::CPU_ISSET(i, &set) })
        .collect()
}

/// Parses the fields of /proc/cpuinfo that matter here: (model, flags).
pub fn parse_cpuinfo(text: &str) -> (Option<String>, CpuFlags) {
    let value = |key: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim().to_string())
        })
    };
    let model = value("model name")
        .or_else(|| value("Model"))
        .or_else(|| value("cpu model"))
        .or_else(|| value("uarch"));
    let mut flags = CpuFlags::default();
    if let Some(list) = value("flags") {
        flags.known = true;
        for f in list.split_whitespace() {
            match f {
                "tsc" => flags.tsc = true,
                "constant_tsc" => flags.constant_tsc = true,
                "nonstop_tsc" => flags.nonstop_tsc = true,
                "rdtscp" => flags.rdtscp = true,
                "tsc_known_freq" => flags.tsc_known_freq = true,
                "hypervisor" => flags.hypervisor = true,
                _ => {}
            }
        }
    }
    (model, flags)
}

/// Parses /proc/self/timens_offsets ("monotonic  0  0" per line).
pub fn parse_timens(text: &str) -> Vec<TimensOffset> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let clock = it.next()?.to_string();
            let secs = it.next()?.parse().ok()?;
            let nsecs = it.next()?.parse().ok()?;
            Some(TimensOffset { clock, secs, nsecs })
        })
        .collect()
}

/// The reason in a kernel log record that marks the TSC unstable: "Marking TSC
/// unstable due to REASON" (arch/x86/kernel/tsc.c, for the boot parameter, the
/// clocksource watchdog, unsynchronized TSCs, cpufreq changes, ...).
pub fn tsc_unstable_reason(record: &str) -> Option<String> {
    let (_, rest) = record.split_once("Marking TSC unstable due to ")?;
    Some(rest.lines().next().unwrap_or("").trim().to_string())
}

/// Reads the kernel log through /dev/kmsg (needs CAP_SYSLOG or a permissive
/// dmesg_restrict) and looks for the TSC being marked unstable, and why.
fn tsc_marked_unstable() -> Option<(bool, Option<String>)> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open("/dev/kmsg")
        .ok()?;
    let mut buf = vec![0u8; 8192];
    let mut found = false;
    let mut reason = None;
    // Each read returns one record; EAGAIN ends the buffer. Bounded for safety.
    for _ in 0..200_000 {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let rec = String::from_utf8_lossy(&buf[..n]);
                if let Some(r) = tsc_unstable_reason(&rec) {
                    reason.get_or_insert(r);
                    found = true;
                } else if rec.contains("TSC found unstable") {
                    found = true;
                }
            }
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(_) => return None,
        }
    }
    Some((found, reason))
}

fn hypervisor(flags: &CpuFlags, dmi: Option<&str>) -> Option<String> {
    if let Some(t) = read_trimmed("/sys/hypervisor/type") {
        return Some(t);
    }
    let dmi_vm = dmi.filter(|p| {
        let p = p.to_ascii_lowercase();
        [
            "kvm",
            "qemu",
            "vmware",
            "virtualbox",
            "virtual machine",
            "hvm",
            "xen",
            "bochs",
            "cloud",
        ]
        .iter()
        .any(|k| p.contains(k))
    });
    if let Some(p) = dmi_vm {
        return Some(p.to_string());
    }
    if !flags.hypervisor {
        return None;
    }
    Some(cpuid_hypervisor().unwrap_or_else(|| "unknown (cpuinfo hypervisor flag)".to_string()))
}

/// The hypervisor's CPUID signature (leaf 0x40000000): `KVMKVMKVM`, `Microsoft Hv`,
/// `VMwareVMware`, `XenVMMXenVMM`, ... Only meaningful when the hypervisor bit is set.
#[cfg(target_arch = "x86_64")]
fn cpuid_hypervisor() -> Option<String> {
    #[allow(unused_unsafe)]
    // SAFETY: CPUID exists on every x86_64 CPU; leaf 0x40000000 is reserved for
    // hypervisors and returns zeros (or the highest basic leaf) elsewhere.
    let r = unsafe { std::arch::x86_64::__cpuid(0x4000_0000) };
    let bytes: Vec<u8> = [r.ebx, r.ecx, r.edx]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    let sig: String = String::from_utf8_lossy(&bytes)
        .trim_matches(char::from(0))
        .to_string();
    let known = [
        ("KVMKVMKVM", "KVM"),
        ("Microsoft Hv", "Hyper-V"),
        ("VMwareVMware", "VMware"),
        ("XenVMMXenVMM", "Xen HVM"),
        ("TCGTCGTCGTCG", "QEMU TCG"),
        ("ACRNACRNACRN", "ACRN"),
        ("bhyve bhyve ", "bhyve"),
        (" lrpepyh  vr", "Parallels"),
        ("VBoxVBoxVBox", "VirtualBox"),
    ];
    let printable = !sig.is_empty() && sig.chars().all(|c| c.is_ascii_graphic() || c == ' ');
    known
        .iter()
        .find(|(k, _)| *k == sig)
        .map(|(_, name)| format!("{name} (CPUID signature {sig:?})"))
        .or_else(|| printable.then(|| format!("CPUID signature {sig:?}")))
}

#[cfg(not(target_arch = "x86_64"))]
fn cpuid_hypervisor() -> Option<String> {
    None
}

/// Reads every fact. Cheap (a few small files) except the kernel log scan.
pub fn collect() -> SystemFacts {
    let (kernel_release, machine) = uname();
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let (cpu_model, cpu_flags) = parse_cpuinfo(&cpuinfo);
    let dmi_product = read_trimmed("/sys/class/dmi/id/product_name");
    let log = tsc_marked_unstable();
    SystemFacts {
        kernel_release,
        machine,
        page_size: page_size(),
        cpu_model,
        cpus: allowed_cpus().len(),
        clocksource: read_trimmed(&format!("{CLOCKSOURCE_DIR}/current_clocksource")),
        clocksources_available: read_trimmed(&format!("{CLOCKSOURCE_DIR}/available_clocksource"))
            .map(|s| s.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
        hypervisor: hypervisor(&cpu_flags, dmi_product.as_deref()),
        cpu_flags,
        dmi_product,
        timens_offsets: fs::read_to_string("/proc/self/timens_offsets")
            .map(|t| parse_timens(&t))
            .unwrap_or_default(),
        tsc_marked_unstable: log.as_ref().map(|l| l.0),
        tsc_unstable_reason: log.and_then(|l| l.1),
        kernel_cmdline: read_trimmed("/proc/cmdline"),
        emulator: std::env::var("LD_PRELOAD")
            .is_ok_and(|p| p.contains("vgpreload"))
            .then(|| "valgrind".to_string()),
        aux_clocks_enabled: crate::aux_clocks::listed()
            .map(|clocks| clocks.into_iter().map(crate::names::clock_short).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpuinfo_flags_and_model() {
        let text = "processor\t: 0\nmodel name\t: Test CPU @ 2GHz\nflags\t\t: fpu tsc rdtscp constant_tsc hypervisor\n";
        let (model, f) = parse_cpuinfo(text);
        assert_eq!(model.as_deref(), Some("Test CPU @ 2GHz"));
        assert!(f.known && f.constant_tsc && f.rdtscp && f.hypervisor);
        assert!(!f.nonstop_tsc && !f.tsc_known_freq);
        let (_, arm) = parse_cpuinfo("processor\t: 0\nFeatures\t: fp asimd\n");
        assert!(!arm.known);
    }

    #[test]
    fn timens_lines() {
        let v = parse_timens("monotonic           5         7\nboottime  -3 0\ngarbage\n");
        assert_eq!(v.len(), 2);
        assert_eq!(
            (v[0].clock.as_str(), v[0].secs, v[0].nsecs),
            ("monotonic", 5, 7)
        );
        assert_eq!(v[1].secs, -3);
    }

    #[test]
    fn kernel_log_reasons() {
        let rec = "6,321,1234,-;tsc: Marking TSC unstable due to clocksource watchdog\n";
        assert_eq!(
            tsc_unstable_reason(rec).as_deref(),
            Some("clocksource watchdog")
        );
        assert_eq!(
            tsc_unstable_reason("tsc: Marking TSC unstable due to boot parameter").as_deref(),
            Some("boot parameter")
        );
        assert_eq!(
            tsc_unstable_reason("clocksource: Switched to clocksource hpet"),
            None
        );
    }

    #[test]
    fn boot_params() {
        let f = SystemFacts {
            kernel_cmdline: Some(
                "BOOT_IMAGE=/vmlinuz vdso=1 quiet tsc=unstable vdso=0 -- vdso=1".into(),
            ),
            ..SystemFacts::default()
        };
        assert_eq!(f.boot_param("vdso"), Some("0"));
        assert_eq!(f.boot_param("tsc"), Some("unstable"));
        assert_eq!(f.boot_param("quiet"), Some(""));
        assert_eq!(f.boot_param("clocksource"), None);
        assert_eq!(SystemFacts::default().boot_param("vdso"), None);
    }

    #[test]
    fn collect_reads_this_machine() {
        let f = collect();
        assert!(!f.kernel_release.is_empty());
        assert!(f.page_size >= 4096 && f.page_size.is_power_of_two());
        assert!(f.cpus >= 1);
    }
}
