/* SPDX-License-Identifier: (MIT OR GPL-2.0-only) */
/*
 * The start of each architecture's struct pt_regs, as far as the system call's first
 * argument, and where the kernel takes that argument from. Two programs read them:
 * fentry's, at the kernel's syscall wrappers (arch/ARCH/include/asm/syscall_wrapper.h,
 * the *_REGS_TO_ARGS macros), which take only `const struct pt_regs *`
 * (__x64_sys_clock_gettime and the like); and the tracepoint's, at sys_enter, which
 * is handed the same registers before the wrapper runs, as syscall_get_arguments
 * (arch/ARCH/include/asm/syscall.h) reads them: the registers below still hold the
 * first argument then (the return value overwrites x0, gpr[3] or a0 only after the
 * call). The layouts are the kernel's (arch/ARCH/include/asm/ptrace.h), which are also
 * the user-visible register sets ptrace returns.
 *
 * One of __TARGET_ARCH_x86, _arm64, _s390, _riscv or _powerpc is defined by
 * `cargo xtask bpf`, one object per architecture.
 */
#ifndef VDSOTIME_PT_REGS_H
#define VDSOTIME_PT_REGS_H

#include "helpers.h"

#if defined(__TARGET_ARCH_x86)
/* arch/x86/include/asm/ptrace.h (64-bit). */
struct pt_regs {
	__u64 r15, r14, r13, r12, bp, bx, r11, r10, r9, r8, ax, cx, dx, si, di;
	__u64 orig_ax, ip, cs;
};
/* The code segment of a task running 32-bit code (__USER32_CS,
 * arch/x86/include/asm/segment.h): its calls enter by the i386 table. */
#define USER32_CS 0x23
/* SC_X86_64_REGS_TO_ARGS: di, si, dx, ...; SC_IA32_REGS_TO_ARGS (the __ia32_sys_ and
 * __ia32_compat_sys_ entries of 32-bit tasks): bx, cx, dx, ... (syscall_get_arguments
 * alike, by the task's TS_COMPAT). */
#define NATIVE_ARG0(regs) ((regs)->di)
#define COMPAT_ARG0(regs) ((regs)->bx)
/* The registers from NATIVE_ARG0 to the code segment, read at once. */
struct native_tail {
	__u64 arg0, orig_ax, ip, cs;
};

#elif defined(__TARGET_ARCH_arm64)
/* arch/arm64/include/asm/ptrace.h: regs[31], sp, pc, pstate, orig_x0, ... */
struct pt_regs {
	__u64 regs[31];
};
/* SC_ARM64_REGS_TO_ARGS: regs[0], regs[1], ... */
#define NATIVE_ARG0(regs) ((regs)->regs[0])

#elif defined(__TARGET_ARCH_s390)
/* arch/s390/include/asm/ptrace.h: args[1], psw (mask, addr), gprs[16], orig_gpr2. */
struct pt_regs {
	__u64 args[1];
	__u64 psw_mask, psw_addr;
	__u64 gprs[16];
	__u64 orig_gpr2;
};
/* SC_S390_REGS_TO_ARGS: orig_gpr2, gprs[3], ... (gprs[2] is the return value's). */
#define NATIVE_ARG0(regs) ((regs)->orig_gpr2)

#elif defined(__TARGET_ARCH_riscv)
/* arch/riscv/include/asm/ptrace.h: epc, ra, sp, gp, tp, t0-t2, s0, s1, a0-a7, s2-s11,
 * t3-t6, status, badaddr, cause, orig_a0. */
struct pt_regs {
	__u64 epc, ra, sp, gp, tp, t0, t1, t2, s0, s1;
	__u64 a[8];
	__u64 s2_s11[10], t3_t6[4];
	__u64 status, badaddr, cause, orig_a0;
};
/* SC_RISCV_REGS_TO_ARGS: orig_a0, a1, ... (a0 holds -ENOSYS by then). */
#define NATIVE_ARG0(regs) ((regs)->orig_a0)

#elif defined(__TARGET_ARCH_powerpc)
/* arch/powerpc/include/asm/ptrace.h: gpr[32], nip, msr, orig_gpr3, ... The wrappers
 * (sys_clock_gettime(const struct pt_regs *)) exist where the kernel selects
 * ARCH_HAS_SYSCALL_WRAPPER (64-bit, Linux 6.1+). */
struct pt_regs {
	__u64 gpr[32];
};
/* SC_POWERPC_REGS_TO_ARGS: gpr[3], gpr[4], ... */
#define NATIVE_ARG0(regs) ((regs)->gpr[3])

#else
#error "define the architecture: __TARGET_ARCH_x86, _arm64, _s390, _riscv or _powerpc"
#endif

#endif
