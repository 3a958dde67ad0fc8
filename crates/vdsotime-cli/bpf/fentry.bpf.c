/* SPDX-License-Identifier: (MIT OR GPL-2.0-only) */
/*
 * `vdsotime top`'s fentry counter: a program at the entry of each time system call's
 * own kernel function (__x64_sys_clock_gettime, ...), so that no other system call
 * runs anything of it. User space attaches slot i's program to one function and sets
 * numbers[i] to that call's number in the function's ABI, which the program's kind
 * names: native_i for the kernel's own table, compat_i (x86_64) for the i386 entries
 * (__ia32_sys_..., __ia32_compat_sys_...) of 32-bit tasks. A call is counted under
 * the number of the table it entered by, whatever the executable.
 *
 * Every such function takes one argument, the task's saved registers; the call's own
 * first argument (the clock id) is read from them (pt_regs.h).
 */
#include "pt_regs.h"
#include "count.h"

#define NATIVE(slot)                                                           \
	SEC("fentry")                                                          \
	int native_##slot(__u64 *ctx)                                          \
	{                                                                      \
		const struct pt_regs *regs = (const struct pt_regs *)ctx[0];   \
		count_call(slot, ABI_NATIVE, NATIVE_ARG0(regs));               \
		return 0;                                                      \
	}

/* The slots of native calls: 0 to 7; of compat calls: 8 to 15. */
NATIVE(0) NATIVE(1) NATIVE(2) NATIVE(3) NATIVE(4) NATIVE(5) NATIVE(6) NATIVE(7)

#ifdef COMPAT_ARG0
#define COMPAT(slot)                                                           \
	SEC("fentry")                                                          \
	int compat_##slot(__u64 *ctx)                                          \
	{                                                                      \
		const struct pt_regs *regs = (const struct pt_regs *)ctx[0];   \
		count_call(slot, ABI_COMPAT, COMPAT_ARG0(regs));               \
		return 0;                                                      \
	}

COMPAT(8) COMPAT(9) COMPAT(10) COMPAT(11) COMPAT(12) COMPAT(13) COMPAT(14) COMPAT(15)
#endif
