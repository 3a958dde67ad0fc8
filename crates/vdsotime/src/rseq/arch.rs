//! The per-architecture part of the rseq reads: a load relative to the thread pointer,
//! and the addresses of glibc's two variables, referenced weakly from two words the
//! static or dynamic linker fills in (0 where they are undefined).

/// The asm lines that define, under local labels `2` and `3`, two pointer-sized words
/// (`$word`: the assembler's directive for one) holding the addresses of the weakly
/// referenced `__rseq_offset` and `__rseq_size`. Numeric labels keep copies of a block
/// that uses them apart.
#[allow(unused_macros)] // unused where no architecture below has the lookup
macro_rules! weak_words {
    ($word:literal) => {
        concat!(
            ".pushsection .data.rel.ro.vdsotime_rseq,\"aw\",@progbits\n",
            ".balign 8\n",
            ".weak __rseq_offset\n",
            ".weak __rseq_size\n",
            "2: ",
            $word,
            " __rseq_offset\n",
            "3: ",
            $word,
            " __rseq_size\n",
            ".popsection",
        )
    };
}

#[cfg(target_arch = "x86_64")]
mod imp {
    /// Reads the `u32` at `offset` from the thread pointer (`%fs` base).
    ///
    /// # Safety
    /// `offset` must address readable memory of the calling thread's TLS block.
    #[inline(always)]
    pub(in crate::rseq) unsafe fn load_u32(offset: isize) -> u32 {
        let v: u32;
        // SAFETY: the caller guarantees the address is readable; not `pure`, because
        // the kernel rewrites the field behind the compiler's back.
        unsafe {
            core::arch::asm!("mov {v:e}, dword ptr fs:[{o}]", v = out(reg) v, o = in(reg) offset,
                options(nostack, readonly, preserves_flags));
        }
        v
    }

    /// `(__rseq_offset, __rseq_size)` if the process has them (glibc 2.35+).
    pub(in crate::rseq) fn glibc_registration() -> Option<(isize, u32)> {
        let (offset, size): (*const isize, *const u32);
        // SAFETY: two words in a read-only data section hold the addresses of the weakly
        // referenced symbols (0 when undefined), filled in by the static or dynamic
        // linker; the asm only loads them. Numeric labels keep copies of this block apart.
        unsafe {
            core::arch::asm!(
                weak_words!(".quad"),
                "mov {o}, qword ptr [rip + 2b]",
                "mov {s}, qword ptr [rip + 3b]",
                o = out(reg) offset, s = out(reg) size,
                options(nostack, readonly, preserves_flags, pure),
            );
        }
        super::super::read_registration(offset, size)
    }
}

#[cfg(target_arch = "aarch64")]
mod imp {
    /// Reads the `u32` at `offset` from the thread pointer (`TPIDR_EL0`).
    ///
    /// # Safety
    /// `offset` must address readable memory of the calling thread's TLS block.
    #[inline(always)]
    pub(in crate::rseq) unsafe fn load_u32(offset: isize) -> u32 {
        let v: u32;
        // SAFETY: reading TPIDR_EL0 has no side effects; the caller guarantees the
        // address is readable. Not `pure`: the kernel rewrites the field.
        unsafe {
            core::arch::asm!("mrs {t}, tpidr_el0", "ldr {v:w}, [{t}, {o}]",
                t = out(reg) _, v = out(reg) v, o = in(reg) offset,
                options(nostack, readonly, preserves_flags));
        }
        v
    }

    /// `(__rseq_offset, __rseq_size)` if the process has them (glibc 2.35+).
    pub(in crate::rseq) fn glibc_registration() -> Option<(isize, u32)> {
        let (offset, size): (*const isize, *const u32);
        // SAFETY: as on x86-64: two linker-filled words, loaded PC-relative.
        unsafe {
            core::arch::asm!(
                weak_words!(".xword"),
                "adrp {o}, 2b",
                "ldr {o}, [{o}, :lo12:2b]",
                "adrp {s}, 3b",
                "ldr {s}, [{s}, :lo12:3b]",
                o = out(reg) offset, s = out(reg) size,
                options(nostack, readonly, preserves_flags, pure),
            );
        }
        super::super::read_registration(offset, size)
    }
}

#[cfg(target_arch = "x86")]
mod imp {
    /// Reads the `u32` at `offset` from the thread pointer (`%gs` base).
    ///
    /// # Safety
    /// `offset` must address readable memory of the calling thread's TLS block.
    #[inline(always)]
    pub(in crate::rseq) unsafe fn load_u32(offset: isize) -> u32 {
        let v: u32;
        // SAFETY: the caller guarantees the address is readable; not `pure`, because
        // the kernel rewrites the field behind the compiler's back.
        unsafe {
            core::arch::asm!("mov {v}, dword ptr gs:[{o}]", v = out(reg) v, o = in(reg) offset,
                options(nostack, readonly, preserves_flags));
        }
        v
    }

    /// `(__rseq_offset, __rseq_size)` if the process has them (glibc 2.35+).
    pub(in crate::rseq) fn glibc_registration() -> Option<(isize, u32)> {
        let (offset, size): (*const isize, *const u32);
        // SAFETY: as on x86-64, two linker-filled words; i386 has no PC-relative loads,
        // so the asm takes its own address with a call (balanced by the pop, so the
        // stack is as it was) and addresses the words from there.
        unsafe {
            core::arch::asm!(
                weak_words!(".long"),
                "call 4f",
                "4: popl {o}",
                "movl (3b - 4b)({o}), {s}",
                "movl (2b - 4b)({o}), {o}",
                o = out(reg) offset, s = out(reg) size,
                options(readonly, preserves_flags, att_syntax),
            );
        }
        super::super::read_registration(offset, size)
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "x86")))]
mod imp {
    /// Never called: no area is ever resolved here.
    ///
    /// # Safety
    /// None needed.
    #[inline(always)]
    pub(in crate::rseq) unsafe fn load_u32(_offset: isize) -> u32 {
        u32::MAX
    }

    /// This architecture has no lookup of glibc's registration here.
    pub(in crate::rseq) fn glibc_registration() -> Option<(isize, u32)> {
        None
    }
}

pub(super) use imp::{glibc_registration, load_u32};
