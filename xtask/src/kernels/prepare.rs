//! Before a boot: each target built once (the first time a boot needs it), each boot's
//! initramfs written, and the order the boots start in (module `verdict` boots one and
//! tells what it showed; module `schedule` runs them all).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::aux_c::{self, AuxPrograms};
use super::build::{self, Built};
use super::kernel::{Kernel, Unbootable};
use super::machines::Machine;
use super::scenarios::Scenario;
use super::{payload, source, top};
use crate::toolchain;

/// What every boot shares.
#[derive(Debug)]
pub struct Context<'a> {
    pub root: &'a Path,
    pub work: &'a Path,
    pub install: bool,
    pub install_err: Option<&'a str>,
    pub per_binary: Duration,
    pub skip: &'a [String],
    pub dump_dir: Option<&'a Path>,
}

/// A boot ready to start, or why it cannot be.
#[derive(Debug)]
pub struct Ready {
    pub(super) machine: Machine,
    pub(super) scenario: Scenario,
    pub(super) kernel: Result<Kernel, Unbootable>,
    pub(super) initrd: PathBuf,
    pub(super) budget: Duration,
    pub(super) skips: Vec<String>,
}

/// Boot time and the tools' runs on top of the programs' budget.
const MARGIN: Duration = Duration::from_secs(120);

/// The boots of `machines`, in the order they start: every default boot first, then the
/// shorter ones, so that `--jobs` machines end close together.
pub fn boot_order(
    machines: &[Machine],
    kernels: Vec<Result<Kernel, Unbootable>>,
) -> Vec<(Machine, Result<Kernel, Unbootable>, Scenario)> {
    let pairs: Vec<_> = machines.iter().zip(kernels).collect();
    let mut v = Vec::new();
    for suite in [true, false] {
        for (m, k) in &pairs {
            for s in m.scenarios.iter().filter(|s| s.suite == suite) {
                v.push((**m, k.clone(), *s));
            }
        }
    }
    v
}

/// Builds each target once (the first time a boot needs it) and writes each boot's
/// initramfs.
pub struct Preparer<'a> {
    ctx: &'a Context<'a>,
    /// Not being able to build for a target is UNAVAILABLE (a linker or a standard
    /// library missing); the build failing is a failure.
    builds: BTreeMap<&'static str, Result<Built, Unbootable>>,
    objcopy: Result<PathBuf, String>,
    /// The auxiliary clocks' C programs, built the first time a machine with them needs
    /// them.
    aux_programs: Option<Result<AuxPrograms, Unbootable>>,
    /// The `top_overhead` benchmark, by target, built the first time a boot runs it.
    benches: BTreeMap<&'static str, Result<PathBuf, Unbootable>>,
    /// Time spent building.
    pub building: Duration,
}

impl<'a> Preparer<'a> {
    pub fn new(ctx: &'a Context<'a>) -> Self {
        Self {
            ctx,
            builds: BTreeMap::new(),
            objcopy: toolchain::rust_tool("rust-objcopy"),
            aux_programs: None,
            benches: BTreeMap::new(),
            building: Duration::ZERO,
        }
    }

    /// The boot of `m`'s `kernel` in `scenario`, ready to start (or why it cannot).
    pub fn prepare(
        &mut self,
        m: Machine,
        kernel: Result<Kernel, Unbootable>,
        scenario: Scenario,
    ) -> Ready {
        let ctx = self.ctx;
        let dir = ctx.work.join(m.name).join(scenario.name);
        let _ = fs::create_dir_all(&dir);
        let mut ready = Ready {
            machine: m,
            scenario,
            kernel,
            initrd: dir.join("initramfs.cpio"),
            budget: Duration::ZERO,
            skips: Vec::new(),
        };
        if let Some(k) = ready.kernel.as_ref().ok().filter(|k| k.unbuilt.is_some()) {
            // Here rather than in the fetch step: the machines before it boot meanwhile.
            let started = Instant::now();
            let logs = ctx.work.join("logs");
            let _ = fs::create_dir_all(&logs);
            let log = logs.join(format!("{}.kernel-build.log", m.name));
            ready.kernel = source::ensure_built(&m, k.clone(), &log);
            self.building += started.elapsed();
        }
        if ready.kernel.is_err() {
            return ready;
        }
        self.build(m.triple);
        // x86_64's 32-bit counted process: the i686 build's init (built once, shared with
        // the i686 machine).
        let compat_init = match top::count::compat_triple(&m).filter(|_| scenario.suite) {
            Some(triple) => match self.build(triple) {
                Ok(b) => Some(b.init.clone()),
                Err(e) => {
                    ready.kernel = Err(e.clone());
                    return ready;
                }
            },
            None => None,
        };
        let overhead = if scenario.overhead {
            match self.overhead_bench(m.triple) {
                Ok(bench) => Some(bench.clone()),
                Err(e) => {
                    ready.kernel = Err(e.clone());
                    return ready;
                }
            }
        } else {
            None
        };
        let built = &self.builds[m.triple];
        let aux_programs = if m.source_config.is_some() && scenario.suite {
            let started = Instant::now();
            let programs = aux_c::built_once(&mut self.aux_programs, ctx.root, ctx.work);
            self.building += started.elapsed();
            match programs {
                Ok(p) => Some(p),
                Err(e) => {
                    ready.kernel = Err(e);
                    return ready;
                }
            }
        } else {
            None
        };
        let written = built.as_ref().map_err(Clone::clone).and_then(|b| {
            let objcopy = self
                .objcopy
                .as_ref()
                .map_err(|e| Unbootable::Unavailable(e.clone()))?;
            let spec = payload::Spec {
                scenario: &scenario,
                emulator: &format!("{} (TCG, system mode)", m.qemu),
                arch: m.arch,
                per_binary: ctx.per_binary,
                extra_skips: ctx.skip,
                require: require(&m),
                vdso_getrandom: ready.kernel.as_ref().is_ok_and(|k| k.getrandom),
                aux_programs,
                top_counts: top::count::backends(&m),
                compat_init: compat_init.as_deref(),
                overhead: overhead.as_deref(),
            };
            let p = payload::assemble(b, ctx.root, &spec, objcopy).map_err(Unbootable::Failed)?;
            fs::write(&ready.initrd, &p.initramfs)
                .map_err(|e| Unbootable::Failed(format!("{}: {e}", ready.initrd.display())))?;
            Ok(p)
        });
        match written {
            Ok(p) => {
                ready.budget = p.budget + MARGIN;
                ready.skips = p.skips;
            }
            Err(e) => ready.kernel = Err(e),
        }
        ready
    }
}

impl Preparer<'_> {
    /// Builds the targets of the first machines to boot (at most `count` of them) while
    /// nothing needs them yet: `cargo xtask kernels` calls it while the kernels download,
    /// which leaves the cores idle.
    pub fn warm_up(&mut self, machines: &[Machine], count: usize) {
        let mut triples: Vec<&'static str> = Vec::new();
        for m in machines {
            if !triples.contains(&m.triple) && triples.len() < count {
                triples.push(m.triple);
            }
        }
        for triple in triples {
            // A failure is kept, and reported by the boot that needs the target.
            let _ = self.build(triple);
        }
    }

    /// The `top_overhead` benchmark for `triple`, built the first time a boot runs it,
    /// after the target's other programs (whose build it reuses).
    fn overhead_bench(&mut self, triple: &'static str) -> &Result<PathBuf, Unbootable> {
        let ctx = self.ctx;
        let started = Instant::now();
        let bench = self.benches.entry(triple).or_insert_with(|| {
            let (t, flags, logs) = toolchain_of(ctx, triple)?;
            let log = logs.join(format!("{triple}.bench-build.log"));
            build::overhead_bench(ctx.root, &t, &flags, &log).map_err(Unbootable::Failed)
        });
        self.building += started.elapsed();
        bench
    }

    /// The programs of `triple`, built the first time they are needed (the time counted
    /// in [`Preparer::building`]).
    fn build(&mut self, triple: &'static str) -> &Result<Built, Unbootable> {
        let ctx = self.ctx;
        let started = Instant::now();
        let built = self.builds.entry(triple).or_insert_with(|| {
            let (t, flags, logs) = toolchain_of(ctx, triple)?;
            println!("kernels: building for {triple}...");
            let log = logs.join(format!("{triple}.build.log"));
            let built = build::build(ctx.root, &t, &flags, &log).map_err(Unbootable::Failed);
            let secs = started.elapsed().as_secs();
            println!("kernels: built for {triple} in {secs} s");
            built
        });
        self.building += started.elapsed();
        built
    }
}

/// `triple`'s target, the flags its builds take and the directory of the build logs, or
/// why nothing can be built for it.
fn toolchain_of(
    ctx: &Context,
    triple: &str,
) -> Result<(crate::targets::Target, Vec<String>, PathBuf), Unbootable> {
    let unavailable = Unbootable::Unavailable;
    let t = crate::targets::find(triple).ok_or(unavailable("no cross target".into()))?;
    let logs = ctx.work.join("logs");
    let _ = fs::create_dir_all(&logs);
    let flags = toolchain::prepare(&t, ctx.install, ctx.install_err, &logs).map_err(unavailable)?;
    Ok((t, flags, logs))
}

/// `VDSOTIME_REQUIRE` inside a machine: what its tests must not skip for. Every machine
/// has getcpu and affinity, and a vDSO (but powerpc's raw-symbol test skips for it by
/// design: its vDSO functions do not follow the C calling convention); time namespaces on
/// every architecture but 32-bit arm (whose vDSO has no time-namespace page:
/// unshare(CLONE_NEWTIME) says EINVAL); seccomp everywhere (the tests' filters are written
/// for every architecture). (The getrandom tests have no
/// requirement of their own: the host checks their SKIP lines, see
/// [`super::show::getrandom_failures`].) A kernel built with the auxiliary clocks requires their test.
fn require(m: &Machine) -> &'static str {
    if m.source_config.is_some() {
        // Built with the auxiliary clocks, whose test must then run.
        return "vdso,timens,getcpu,affinity,seccomp,auxclock";
    }
    match m.arch {
        "arm" => "vdso,getcpu,affinity,seccomp",
        "powerpc64le" => "timens,getcpu,affinity,seccomp",
        _ => "vdso,timens,getcpu,affinity,seccomp",
    }
}
