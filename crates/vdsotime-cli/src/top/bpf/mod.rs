//! The BPF backend: a program on the classic `raw_syscalls:sys_enter` tracepoint
//! (bpf/count.bpf.c, compiled into the objects beside it by `cargo xtask bpf`) counts
//! each (process, system call, clock) in a per-CPU hash map inside the kernel; no
//! per-event record leaves it. This side loads it with aya, reads the maps at each
//! refresh, and feeds what the counters added since the last read to the tally.
//!
//! Processes are named by their id in this process's PID namespace: the initial
//! namespace's ids come from `bpf_get_current_pid_tgid`, another namespace's from
//! `bpf_get_ns_current_pid_tgid` (kernel 5.7+), which names only the tasks of that very
//! namespace; the calls of tasks in namespaces below it are counted apart, as not
//! attributable. A 32-bit task on a 64-bit kernel enters with its own table's number;
//! the tally reads it with the ABI of the process's executable, as for the perf backend,
//! so a 32-bit process that exits before it is examined is read in the native table.

mod counts;

use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::os::unix::fs::MetadataExt;
use std::time::Duration;

use aya::maps::{HashMap, MapData, PerCpuArray, PerCpuHashMap};
use aya::programs::TracePoint;
use aya::{Ebpf, EbpfLoader};

use counts::{sum, Deltas, Key};

use crate::top::process;
use crate::top::tally::Tally;
use crate::top::tracefs::SysEnter;

/// The object's bytes, 8-aligned as the ELF reader needs them.
#[repr(C, align(8))]
struct Aligned<T: ?Sized>(T);

#[cfg(target_endian = "little")]
static OBJECT: &Aligned<[u8]> = &Aligned(*include_bytes!("../../../bpf/count.bpfel.o"));
#[cfg(target_endian = "big")]
static OBJECT: &Aligned<[u8]> = &Aligned(*include_bytes!("../../../bpf/count.bpfeb.o"));

/// How often the maps are read: often enough that a process is examined in /proc while
/// it still runs (its facts decide the reason); the counts themselves wait in the kernel.
pub const READ_EVERY: Duration = Duration::from_millis(100);
/// The program's number slots (`MAX_NUMBERS` in count.bpf.c).
const MAX_NUMBERS: usize = 24;
/// The slot of the `missed` map: calls the full maps could not count.
const MISSED_FULL: u32 = 0;
/// The inode of the initial PID namespace (the kernel's PROC_PID_INIT_INO).
const INIT_PID_NS_INO: u64 = 0xEFFF_FFFC;

/// The loaded, attached program and its maps.
pub struct Counter {
    counts: PerCpuHashMap<MapData, Key, u64>,
    comms: HashMap<MapData, u32, [u8; 16]>,
    missed: PerCpuArray<MapData, u64>,
    deltas: Deltas,
    /// The `missed` totals at the last read.
    missed_last: [u64; 1],
    /// The program's descriptor (owned by `_ebpf`), for its `recursion_misses`.
    program_fd: Option<RawFd>,
    /// Its `recursion_misses` at the last read.
    misses_last: u64,
    /// Holds the program and its link: dropping it detaches.
    _ebpf: Ebpf,
}

/// Why the BPF backend could not start, and whether that is a missing privilege.
#[derive(Debug)]
pub struct Unavailable {
    /// What failed, with the kernel's error.
    pub reason: String,
    /// The kernel said EPERM or EACCES.
    pub denied: bool,
}

/// `e` and each error below it, joined with ": ", and whether one is EPERM or EACCES.
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
    if denied {
        reason += " (BPF needs CAP_BPF with CAP_PERFMON, kernel 5.8+, or root)";
    }
    Unavailable { reason, denied }
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

impl Counter {
    /// Loads the program for the counted `numbers` (those in `clock_numbers` take a clock
    /// id first), `only` one process if given, and attaches it to the tracepoint.
    pub fn open(
        layout: &SysEnter,
        numbers: &[i64],
        clock_numbers: &[i64],
        only: Option<u32>,
    ) -> Result<Counter, Unavailable> {
        if layout.nr != (8, 8) || layout.arg0 != (16, 8) {
            return Err(plain(format!(
                "the tracepoint's record has the system call number at {:?} and the \
                 arguments at {:?} (offset, size), not the 64-bit layout the program reads",
                layout.nr, layout.arg0
            )));
        }
        if numbers.len() > MAX_NUMBERS {
            return Err(plain(format!(
                "{} system call numbers, the program holds {MAX_NUMBERS}",
                numbers.len()
            )));
        }
        let mut slots = [-1i64; MAX_NUMBERS];
        let mut takes_clock = 0u32;
        for (i, &n) in numbers.iter().enumerate() {
            slots[i] = n;
            if clock_numbers.contains(&n) {
                takes_clock |= 1 << i;
            }
        }
        let (dev, ino) = pid_namespace()?;
        let only = only.unwrap_or(0);
        let mut ebpf = EbpfLoader::new()
            .override_global("numbers", &slots, true)
            .override_global("takes_clock", &takes_clock, true)
            .override_global("pidns_dev", &dev, true)
            .override_global("pidns_ino", &ino, true)
            .override_global("only_tgid", &only, true)
            .load(&OBJECT.0)
            .map_err(|e| unavailable("loading the BPF counter", &e))?;
        let program: &mut TracePoint = ebpf
            .program_mut("count_sys_enter")
            .ok_or_else(|| plain("the BPF object has no count_sys_enter".into()))?
            .try_into()
            .map_err(|e| unavailable("the BPF counter", &e))?;
        program
            .load()
            .map_err(|e| unavailable("verifying the BPF counter", &e))?;
        program
            .attach("raw_syscalls", "sys_enter")
            .map_err(|e| unavailable("attaching to raw_syscalls:sys_enter", &e))?;
        let program_fd = program.fd().ok().map(|fd| fd.as_fd().as_raw_fd());
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
            program_fd,
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
        if let Some(total) = self.program_fd.and_then(recursion_misses) {
            tally.lost += total.saturating_sub(self.misses_last);
            self.misses_last = total;
        }
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
        tally.count(key.tgid, i64::from(key.nr), arg0, added);
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
