//! The BPF backends: a program counts each (process, system call, clock) in a per-CPU
//! hash map inside the kernel; no per-event record leaves it. `fentry` attaches one
//! program to each time system call's own kernel function (bpf/fentry.bpf.c),
//! `tracepoint` one program to the raw tracepoint `sys_enter` (bpf/sys_enter.bpf.c); both
//! count into the same maps (bpf/count.h), compiled into the objects beside them by
//! `cargo xtask bpf`. This side loads them with aya, reads the maps at each refresh, and
//! feeds what the counters added since the last read to the tally.
//!
//! Processes are named by their id in this process's PID namespace: the initial
//! namespace's ids come from `bpf_get_current_pid_tgid`, another namespace's from
//! `bpf_get_ns_current_pid_tgid` (kernel 5.7+), which names only the tasks of that very
//! namespace; the calls of tasks in namespaces below it are counted apart, as not
//! attributable. A 32-bit task on a 64-bit kernel enters with its own table's number:
//! fentry knows the table by the function it entered, the tracepoint on x86_64 by the
//! task's code segment (the key says so); elsewhere the tally reads that number with
//! the ABI of the process's executable, as for the perf backend.

/// `static OBJECT` (with `Aligned` in scope): this architecture's object
/// `bpf/<name>.<arch>.o`, 8-aligned, or `None` where the tool has none (each program's
/// register reads are per architecture). Each object is a `const` of its own, which every
/// supported Rust accepts in a static's `Some(..)`.
macro_rules! arch_object {
    ($name:literal) => {
        #[cfg(target_arch = "x86_64")]
        const BYTES: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!(
            "../../../bpf/",
            $name,
            ".x86_64.o"
        )));
        #[cfg(target_arch = "aarch64")]
        const BYTES: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!(
            "../../../bpf/",
            $name,
            ".aarch64.o"
        )));
        #[cfg(target_arch = "s390x")]
        const BYTES: &Aligned<[u8]> =
            &Aligned(*include_bytes!(concat!("../../../bpf/", $name, ".s390x.o")));
        #[cfg(target_arch = "riscv64")]
        const BYTES: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!(
            "../../../bpf/",
            $name,
            ".riscv64.o"
        )));
        #[cfg(all(target_arch = "powerpc64", target_endian = "little"))]
        const BYTES: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!(
            "../../../bpf/",
            $name,
            ".powerpc64le.o"
        )));
        #[cfg(any(
            target_arch = "x86_64",
            target_arch = "aarch64",
            target_arch = "s390x",
            target_arch = "riscv64",
            all(target_arch = "powerpc64", target_endian = "little")
        ))]
        static OBJECT: Option<&Aligned<[u8]>> = Some(BYTES);
        #[cfg(not(any(
            target_arch = "x86_64",
            target_arch = "aarch64",
            target_arch = "s390x",
            target_arch = "riscv64",
            all(target_arch = "powerpc64", target_endian = "little")
        )))]
        static OBJECT: Option<&Aligned<[u8]>> = None;
    };
}

mod counts;
mod fentry;
mod tracepoint;

use std::os::fd::RawFd;
use std::os::unix::fs::MetadataExt;
use std::time::Duration;

use aya::maps::{HashMap, MapData, PerCpuArray, PerCpuHashMap};
use aya::{Ebpf, EbpfLoader};

use counts::{sum, Deltas, Key};

use crate::top::process;
use crate::top::tally::Tally;

/// The object's bytes, 8-aligned as the ELF reader needs them.
#[repr(C, align(8))]
struct Aligned<T: ?Sized>(T);

/// How often the maps are read: often enough that a process is examined in /proc while
/// it still runs (its facts decide the reason); the counts themselves wait in the kernel.
pub const READ_EVERY: Duration = Duration::from_millis(100);
/// The programs' number slots (`MAX_NUMBERS` in count.h).
const MAX_NUMBERS: usize = 24;
/// The slot of the `missed` map: calls the full maps could not count.
const MISSED_FULL: u32 = 0;
/// The inode of the initial PID namespace (the kernel's PROC_PID_INIT_INO).
const INIT_PID_NS_INO: u64 = 0xEFFF_FFFC;

/// The loaded, attached programs and their maps.
pub struct Counter {
    counts: PerCpuHashMap<MapData, Key, u64>,
    comms: HashMap<MapData, u32, [u8; 16]>,
    missed: PerCpuArray<MapData, u64>,
    deltas: Deltas,
    /// The `missed` totals at the last read.
    missed_last: [u64; 1],
    /// The programs' descriptors (owned by `_ebpf`), for their `recursion_misses`.
    programs: Vec<RawFd>,
    /// Their `recursion_misses` at the last read.
    misses_last: u64,
    /// Holds the programs and their links: dropping it detaches.
    _ebpf: Ebpf,
}

/// Why the BPF backend could not start, and whether that is a missing privilege.
#[derive(Debug)]
pub struct Unavailable {
    /// What failed, with the kernel's error.
    pub reason: String,
    /// The kernel said EPERM or EACCES, and this process lacks the capabilities BPF needs.
    pub denied: bool,
}

/// `e` and each error below it, joined with ": ", and whether one is EPERM or EACCES
/// that a privilege would lift.
fn unavailable(what: &str, e: &(dyn std::error::Error + 'static)) -> Unavailable {
    let mut reason = format!("{what}: {e}");
    let mut denied = false;
    let mut next = e.source();
    while let Some(inner) = next {
        // aya's errors often repeat their source's message: once is enough.
        let text = inner.to_string();
        if !reason.contains(&text) {
            reason += &format!(": {text}");
        }
        if let Some(io) = inner.downcast_ref::<std::io::Error>() {
            denied |= matches!(io.raw_os_error(), Some(libc::EPERM | libc::EACCES));
        }
        next = inner.source();
    }
    // aya's message ends so when the kernel refused before its verifier ran.
    if let Some(cut) = reason.strip_suffix(" Verifier output: ") {
        reason = cut.to_string();
    }
    if denied && has_bpf_capabilities() {
        // Not a privilege this process could be given: say which policy, and exit as an
        // error.
        reason += &format!(
            " (refused although this process has the capabilities BPF needs: {})",
            refusing_policy()
        );
        denied = false;
    } else if denied {
        reason += " (BPF needs CAP_BPF with CAP_PERFMON, kernel 5.8+, or root)";
    }
    Unavailable { reason, denied }
}

/// What, other than a missing capability, refuses BPF to this process: a seccomp filter
/// (a container's profile), the kernel's lockdown, or else a security module.
fn refusing_policy() -> String {
    // `Seccomp: 2`: a filter is installed (proc(5)).
    if self_status("Seccomp").as_deref() == Some("2") {
        return "this process runs under a seccomp filter, as a container's profile \
                installs, which may deny bpf(): run it outside the container, or with a \
                profile that allows bpf and perf_event_open"
            .to_string();
    }
    // `none integrity [confidentiality]`: the bracketed mode is in force.
    let lockdown = std::fs::read_to_string("/sys/kernel/security/lockdown").unwrap_or_default();
    match lockdown.split_whitespace().find(|m| m.starts_with('[')) {
        Some(mode) if mode != "[none]" => format!(
            "the kernel is locked down ({}), which forbids BPF programs that read kernel \
             memory",
            mode.trim_matches(['[', ']'])
        ),
        _ => "a security policy of the kernel, such as a security module (LSM), forbids it"
            .to_string(),
    }
}

/// Whether this process has CAP_SYS_ADMIN, or CAP_BPF with CAP_PERFMON (what BPF needs).
fn has_bpf_capabilities() -> bool {
    let effective = self_status("CapEff")
        .and_then(|hex| u64::from_str_radix(&hex, 16).ok())
        .unwrap_or(0);
    let has = |cap: u32| effective & (1 << cap) != 0;
    // CAP_SYS_ADMIN 21, CAP_PERFMON 38, CAP_BPF 39 (linux/capability.h).
    has(21) || (has(38) && has(39))
}

/// The value of `field` in this process's `/proc/self/status`, trimmed.
fn self_status(field: &str) -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|l| {
        let value = l.strip_prefix(field)?.strip_prefix(':')?;
        Some(value.trim().to_string())
    })
}

fn plain(reason: String) -> Unavailable {
    Unavailable {
        reason,
        denied: false,
    }
}

/// The viewer's PID namespace as the program takes it: (0, 0) for the initial one, else
/// the device (the kernel's encoding: major << 20 | minor) and inode of its nsfs file.
fn pid_namespace() -> Result<(u64, u64), Unavailable> {
    let meta = std::fs::metadata("/proc/self/ns/pid")
        .map_err(|e| plain(format!("/proc/self/ns/pid: {e}")))?;
    if meta.ino() == INIT_PID_NS_INO {
        return Ok((0, 0));
    }
    let dev = meta.dev();
    let (major, minor) = (u64::from(libc::major(dev)), u64::from(libc::minor(dev)));
    Ok(((major << 20) | minor, meta.ino()))
}

/// What user space writes into a counter's read-only data before loading it.
struct Settings {
    /// The counted numbers, by slot (`numbers`); -1 in an unused slot.
    slots: [i64; MAX_NUMBERS],
    /// Bit i: slot i's call takes a clock id first (`takes_clock`).
    takes_clock: u32,
    /// Only this process, or 0 (`only_tgid`).
    only: u32,
}

impl Settings {
    /// Settings of no slot yet, `only` one process if given.
    fn new(only: Option<u32>) -> Settings {
        Settings {
            slots: [-1; MAX_NUMBERS],
            takes_clock: 0,
            only: only.unwrap_or(0),
        }
    }

    /// Counts number `nr` in `slot`.
    fn set(&mut self, slot: usize, nr: i64, takes_clock: bool) -> Result<(), Unavailable> {
        let entry = self.slots.get_mut(slot).ok_or_else(|| {
            plain(format!(
                "slot {slot}: the program holds {MAX_NUMBERS} numbers"
            ))
        })?;
        *entry = nr;
        if takes_clock {
            self.takes_clock |= 1 << slot;
        }
        Ok(())
    }
}

/// Parses `object` with `settings` as its read-only data, against the kernel's `btf`
/// where it was read already; no program is loaded yet.
fn parse(object: &[u8], settings: &Settings, btf: Option<&aya::Btf>) -> Result<Ebpf, Unavailable> {
    let (dev, ino) = pid_namespace()?;
    let mut loader = EbpfLoader::new();
    if let Some(btf) = btf {
        loader.btf(Some(btf));
    }
    loader
        .override_global("numbers", &settings.slots, true)
        .override_global("takes_clock", &settings.takes_clock, true)
        .override_global("pidns_dev", &dev, true)
        .override_global("pidns_ino", &ino, true)
        .override_global("only_tgid", &settings.only, true)
        .load(object)
        .map_err(|e| unavailable("loading the BPF counter", &e))
}

impl Counter {
    /// The counter whose attached programs `ebpf` holds, their descriptors `programs`.
    fn holding(mut ebpf: Ebpf, programs: Vec<RawFd>) -> Result<Counter, Unavailable> {
        let mut take = |name: &str| {
            ebpf.take_map(name)
                .ok_or_else(|| plain(format!("the BPF object has no map {name}")))
        };
        let (counts, comms, missed) = (take("counts")?, take("comms")?, take("missed")?);
        let map_error = |e: aya::maps::MapError| unavailable("the BPF maps", &e);
        Ok(Counter {
            counts: PerCpuHashMap::try_from(counts).map_err(map_error)?,
            comms: HashMap::try_from(comms).map_err(map_error)?,
            missed: PerCpuArray::try_from(missed).map_err(map_error)?,
            deltas: Deltas::default(),
            missed_last: [0; 1],
            programs,
            misses_last: 0,
            _ebpf: ebpf,
        })
    }

    /// Adds to `tally` what the counters added since the last read, with the names of
    /// the processes first seen; then deletes the keys of the processes that have exited
    /// (read a last time first), so no call is lost between a read and a delete.
    pub fn read(&mut self, tally: &mut Tally) {
        // Which processes had exited before this read: they cannot count any more.
        let keys: Vec<Key> = self.counts.keys().filter_map(Result::ok).collect();
        let named: Vec<(u32, [u8; 16])> = self.comms.iter().filter_map(Result::ok).collect();
        // Every process either map holds: a name whose calls the full map could not
        // count must go too, or the names would fill their map.
        let mut gone: Vec<u32> = keys.iter().map(|k| k.tgid).collect();
        gone.extend(named.iter().map(|(tgid, _)| *tgid));
        gone.sort_unstable();
        gone.dedup();
        // 0: every process outside the viewer's PID namespace, which never exits.
        gone.retain(|&pid| pid != 0 && !process::alive(pid));
        for (tgid, comm) in named {
            let len = comm.iter().position(|&b| b == 0).unwrap_or(comm.len());
            tally.name(tgid, String::from_utf8_lossy(&comm[..len]).into_owned());
        }
        for (key, values) in self.counts.iter().filter_map(Result::ok) {
            let added = self.deltas.step(key, sum(&values));
            feed(tally, key, added);
        }
        // A key the walk above missed (the map changed under it) is read here.
        for key in keys.iter().filter(|k| gone.binary_search(&k.tgid).is_ok()) {
            if let Ok(values) = self.counts.get(key, 0) {
                let added = self.deltas.step(*key, sum(&values));
                feed(tally, *key, added);
            }
            let _ = self.counts.remove(key);
            self.deltas.forget(key);
        }
        for pid in gone {
            let _ = self.comms.remove(&pid);
        }
        tally.lost += self.missed_since_last(MISSED_FULL);
        // Events the kernel did not run the program for, as a BPF program was already
        // running on that CPU (its `recursion_misses`, kernel 5.12+): uncounted too.
        let total: u64 = self
            .programs
            .iter()
            .filter_map(|&fd| recursion_misses(fd))
            .sum();
        tally.lost += total.saturating_sub(self.misses_last);
        self.misses_last = total;
    }

    /// What slot `slot` of the `missed` map added since the last read.
    fn missed_since_last(&mut self, slot: u32) -> u64 {
        let total = self.missed.get(&slot, 0).map_or(0, |v| sum(&v));
        let last = &mut self.missed_last[slot as usize];
        let added = total.wrapping_sub(*last);
        *last = total;
        added
    }
}

/// The `recursion_misses` of a BPF program descriptor, from its fdinfo.
fn recursion_misses(fd: RawFd) -> Option<u64> {
    misses_in(&std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).ok()?)
}

/// The `recursion_misses:` line of fdinfo text.
fn misses_in(fdinfo: &str) -> Option<u64> {
    fdinfo
        .lines()
        .find_map(|l| l.strip_prefix("recursion_misses:"))?
        .trim()
        .parse()
        .ok()
}

/// Counts `added` calls of `key` in `tally`.
fn feed(tally: &mut Tally, key: Key, added: u64) {
    if added > 0 {
        // The clock id as the register held it: the tally reads its low 32 bits.
        let arg0 = key.clock as u32 as u64;
        tally.count(key.tgid, key.abi(), i64::from(key.nr), arg0, added);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_misses_are_read_from_fdinfo() {
        let info = "prog_type:\t5\nrun_cnt:\t0\nrecursion_misses:\t7\nverified_insns:\t465\n";
        assert_eq!(super::misses_in(info), Some(7));
        assert_eq!(super::misses_in("prog_type:\t5\n"), None, "before 5.12");
    }
}
