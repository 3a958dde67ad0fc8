//! The `fentry` backend: one program at the entry of each time system call's own kernel
//! function (bpf/fentry.bpf.c), found by name in the kernel's BTF, so that the other
//! system calls run nothing of it. The functions are the architecture's syscall
//! wrappers, which take the task's saved registers (`const struct pt_regs *`): their
//! layout is the architecture's, so there is one object per architecture. On x86_64 the
//! i386 entries of 32-bit tasks are attached too where the kernel has them, each counted
//! under its own i386 number.

use std::os::fd::{AsFd, AsRawFd, RawFd};

use aya::programs::FEntry;
use aya::Btf;
use aya_obj::btf::BtfKind;

use super::{parse, plain, unavailable, Aligned, Counter, Settings, Unavailable};
use crate::top::syscalls::{self, Abi, Call};

arch_object!("fentry");

/// The names of this architecture's syscall wrappers start so
/// (arch/ARCH/include/asm/syscall_wrapper.h; powerpc's since Linux 6.1).
const NATIVE_PREFIX: &str = if cfg!(target_arch = "x86_64") {
    "__x64_sys_"
} else if cfg!(target_arch = "aarch64") {
    "__arm64_sys_"
} else if cfg!(target_arch = "s390x") {
    "__s390x_sys_"
} else if cfg!(target_arch = "riscv64") {
    "__riscv_sys_"
} else {
    "sys_"
};

/// x86_64's entries of the i386 calls (the entry points of
/// arch/x86/entry/syscalls/syscall_32.tbl, with the `__ia32_` prefix): the 32-bit
/// time_t forms keep the `*_time32` functions, the 64-bit ones take the plain names.
const I386_FUNCTIONS: [(Call, &str); 8] = [
    (Call::Time, "__ia32_sys_time32"),
    (Call::Gettimeofday, "__ia32_compat_sys_gettimeofday"),
    (Call::ClockGettime, "__ia32_sys_clock_gettime32"),
    (Call::ClockGetres, "__ia32_sys_clock_getres_time32"),
    (Call::Getcpu, "__ia32_sys_getcpu"),
    (Call::Getrandom, "__ia32_sys_getrandom"),
    (Call::ClockGettime64, "__ia32_sys_clock_gettime"),
    (Call::ClockGetresTime64, "__ia32_sys_clock_getres"),
];

/// The slots of fentry.bpf.c's programs: `native_0`.. below this, `compat_8`.. from it.
const FIRST_COMPAT_SLOT: usize = 8;
/// The slots it has.
const SLOTS: usize = 16;

/// A kernel function to count a call at.
#[derive(Debug, PartialEq)]
pub struct Target {
    /// Its name in the kernel (and BTF).
    pub function: String,
    /// The table the call entered by.
    pub abi: Abi,
    /// The call.
    pub call: Call,
    /// The program's slot: its name and the `numbers` entry it counts under.
    pub slot: usize,
}

impl Target {
    /// The program attached to it.
    pub fn program(&self) -> String {
        match self.abi {
            Abi::Native => format!("native_{}", self.slot),
            Abi::I386 => format!("compat_{}", self.slot),
        }
    }
}

/// The functions to attach to, given whether the kernel's BTF has each (`has`): every
/// native time call's, which must all be there, and the i386 entries the kernel has.
pub fn targets(has: impl Fn(&str) -> bool) -> Result<Vec<Target>, String> {
    let native = syscalls::table(Abi::Native)
        .into_iter()
        .map(|(_, call)| (Abi::Native, call, format!("{NATIVE_PREFIX}{}", call.name())));
    let compat = I386_FUNCTIONS
        .iter()
        .filter(|_| cfg!(target_arch = "x86_64"))
        .map(|&(call, f)| (Abi::I386, call, f.to_string()));
    let mut targets = Vec::new();
    let mut next = [0, FIRST_COMPAT_SLOT];
    for (abi, call, function) in native.chain(compat) {
        if !has(&function) {
            if abi == Abi::Native {
                return Err(format!("{function} is not in the kernel's BTF"));
            }
            continue;
        }
        let slot = &mut next[usize::from(abi == Abi::I386)];
        let limit = if abi == Abi::Native {
            FIRST_COMPAT_SLOT
        } else {
            SLOTS
        };
        if *slot >= limit {
            return Err(format!("more {abi:?} calls than the program has slots"));
        }
        targets.push(Target {
            function,
            abi,
            call,
            slot: *slot,
        });
        *slot += 1;
    }
    Ok(targets)
}

/// Why the kernel would not attach to `function`: its error, and what fentry needs.
fn refused(function: &str, e: &aya::programs::ProgramError) -> Unavailable {
    let mut u = unavailable(&format!("the kernel refused to attach to {function}"), e);
    if !u.denied {
        u.reason += if cfg!(target_arch = "aarch64") {
            " (fentry needs Linux 6.4 or later on aarch64)"
        } else {
            " (fentry needs Linux 5.5 or later and a trampoline for this architecture)"
        };
    }
    u
}

impl Counter {
    /// Loads a program for each time call's kernel function, `only` one process if
    /// given, and attaches them.
    pub fn fentry(only: Option<u32>) -> Result<Counter, Unavailable> {
        let object = OBJECT.ok_or_else(|| {
            plain(format!(
                "this build has no fentry program for {}",
                std::env::consts::ARCH
            ))
        })?;
        let btf = Btf::from_sys_fs().map_err(|e| {
            plain(format!(
                "the kernel's BTF, /sys/kernel/btf/vmlinux (CONFIG_DEBUG_INFO_BTF), cannot be read: {e}"
            ))
        })?;
        let targets =
            targets(|f| btf.id_by_type_name_kind(f, BtfKind::Func).is_ok()).map_err(plain)?;
        let mut settings = Settings::new(only);
        for t in &targets {
            let nr = syscalls::number(t.abi, t.call)
                .ok_or_else(|| plain(format!("{} has no {:?} number", t.call.name(), t.abi)))?;
            settings.set(t.slot, nr, t.call.takes_clock())?;
        }
        let mut ebpf = parse(&object.0, &settings, Some(&btf))?;
        // All loaded before any is attached: once this process holds as many links as
        // programs, every call is counted (what the tests wait for).
        let mut fds: Vec<RawFd> = Vec::new();
        for t in &targets {
            let program = fentry_program(&mut ebpf, t)?;
            program.load(&t.function, &btf).map_err(|e| {
                unavailable(
                    &format!("loading the fentry program for {}", t.function),
                    &e,
                )
            })?;
            fds.extend(program.fd().ok().map(|fd| fd.as_fd().as_raw_fd()));
        }
        for t in &targets {
            fentry_program(&mut ebpf, t)?
                .attach()
                .map_err(|e| refused(&t.function, &e))?;
        }
        Counter::holding(ebpf, fds)
    }
}

/// The program of `target` in `ebpf`.
fn fentry_program<'a>(
    ebpf: &'a mut aya::Ebpf,
    target: &Target,
) -> Result<&'a mut FEntry, Unavailable> {
    let name = target.program();
    ebpf.program_mut(&name)
        .ok_or_else(|| plain(format!("the fentry object has no program {name}")))?
        .try_into()
        .map_err(|e| unavailable(&format!("the fentry program {name}"), &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_native_call_is_required_and_each_has_its_own_slot() {
        let all = targets(|_| true).expect("every function present");
        let natives: Vec<&Target> = all.iter().filter(|t| t.abi == Abi::Native).collect();
        assert_eq!(natives.len(), syscalls::table(Abi::Native).len());
        for (i, t) in natives.iter().enumerate() {
            assert_eq!(t.slot, i);
            assert!(t.function.starts_with(NATIVE_PREFIX), "{t:?}");
        }
        let missing = format!("{NATIVE_PREFIX}clock_gettime");
        let err = targets(|f| f != missing).expect_err("clock_gettime is required");
        assert_eq!(err, format!("{missing} is not in the kernel's BTF"));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_i386_entries_are_counted_under_i386_numbers_where_the_kernel_has_them() {
        let all = targets(|_| true).expect("every function present");
        let clock = all
            .iter()
            .find(|t| t.function == "__ia32_sys_clock_gettime32")
            .expect("the i386 clock_gettime");
        assert_eq!((clock.abi, clock.call), (Abi::I386, Call::ClockGettime));
        assert_eq!(syscalls::number(clock.abi, clock.call), Some(265));
        assert!(clock.program().starts_with("compat_"));
        let no_ia32 = targets(|f| !f.starts_with("__ia32")).expect("natives suffice");
        assert!(no_ia32.iter().all(|t| t.abi == Abi::Native));
    }
}
