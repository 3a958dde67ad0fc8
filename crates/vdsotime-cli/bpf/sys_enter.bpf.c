/* SPDX-License-Identifier: (MIT OR GPL-2.0-only) */
/*
 * `vdsotime top`'s raw-tracepoint counter: a program on the raw tracepoint sys_enter,
 * which every system call enters. The kernel hands it the call's number and the
 * task's saved user registers as they are, building no record: the number is tested
 * first, and only a counted call reads its first argument (the clock id) from the
 * registers (pt_regs.h), where the kernel's syscall_get_arguments reads it.
 *
 * The number is the task's own ABI's: a 32-bit (compat) task on a 64-bit kernel enters
 * with its 32-bit table's number; user space reads each number with the ABI of the
 * process's executable, as the perf backend does.
 */
#include "pt_regs.h"
#include "count.h"

volatile const __u32 compat_only = 0;
volatile const __u32 use_bits = 0;
volatile const __u64 bits[8] = {};

SEC("raw_tracepoint/sys_enter")
int count_sys_enter(__u64 *ctx)
{
	const struct pt_regs *regs = (const struct pt_regs *)ctx[0];
	__u64 arg0 = 0;
	__u64 cs0 = 0;
	if (compat_only) {
		bpf_probe_read_kernel(&cs0, sizeof(cs0), &regs->cs);
		if (cs0 != USER32_CS)
			return 0;
	}
	__u64 n = ctx[1];
	if (use_bits) {
		if (n >= 512)
			return 0;
		if (!((bits[n >> 6] >> (n & 63)) & 1))
			return 0;
	}
	int slot = slot_of((__s64)n);

	if (slot < 0)
		return 0;

#ifdef COMPAT_ARG0
	/* x86_64: a 32-bit task passes its arguments in the i386 registers. */
	__u64 cs = 0;
	bpf_probe_read_kernel(&cs, sizeof(cs), &regs->cs);
	if (cs == USER32_CS)
		bpf_probe_read_kernel(&arg0, sizeof(arg0), &COMPAT_ARG0(regs));
	else
#endif
		bpf_probe_read_kernel(&arg0, sizeof(arg0), &NATIVE_ARG0(regs));
	count_call(slot, ABI_OF_TASK, arg0);
	return 0;
}
