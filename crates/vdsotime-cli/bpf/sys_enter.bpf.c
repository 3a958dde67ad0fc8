/* SPDX-License-Identifier: (MIT OR GPL-2.0-only) */
/*
 * `vdsotime top`'s tracepoint counter: a program on the raw tracepoint sys_enter, which
 * every system call enters. The kernel hands a raw tracepoint's program the
 * tracepoint's own arguments, the task's saved user registers and the call's number,
 * and builds no record: the classic raw_syscalls:sys_enter tracepoint would first copy
 * the number and six arguments of every call of the host into a perf record. Here
 * the number is tested first, and only a counted call reads its first argument (the
 * clock id) from the registers (pt_regs.h), where the kernel's syscall_get_arguments
 * (arch/ARCH/include/asm/syscall.h) takes it.
 *
 * The per-call tracepoints (syscalls:sys_enter_clock_gettime, ...) would spare the
 * other calls more, as the kernel tests a bitmap before running anything for them,
 * but they never fire for 32-bit tasks on x86_64, whose calls only sys_enter sees:
 * counting those too would add a program here anyway, for every call.
 *
 * A 32-bit (compat) task enters with its own table's number. On x86_64 its code
 * segment tells it: the key says which table the number is in, and the arguments are
 * read from the i386 registers. Elsewhere the number is read with the ABI of the
 * process's executable, as the perf backend reads it.
 */
#include "pt_regs.h"
#include "count.h"

/* The slot whose number is `nr`, or -1 for a call not counted. */
static __always_inline int slot_of(__s64 nr)
{
	int slot = -1;

#pragma unroll
	for (int i = 0; i < MAX_NUMBERS; i++) {
		if (nr == numbers[i]) {
			slot = i;
			break;
		}
	}
	return slot;
}

SEC("raw_tracepoint/sys_enter")
int count_sys_enter(__u64 *ctx)
{
	const struct pt_regs *regs = (const struct pt_regs *)ctx[0];
	int slot = slot_of((__s64)ctx[1]);
	__u32 abi = ABI_OF_TASK;
	__u64 arg0 = 0;

	if (slot < 0)
		return 0;

#ifdef COMPAT_ARG0
	/* A native call's first argument and the code segment in one read: a helper
	 * call is most of what reading them costs. */
	struct native_tail tail = {};

	bpf_probe_read_kernel(&tail, sizeof(tail), &NATIVE_ARG0(regs));
	abi = tail.cs == USER32_CS ? ABI_COMPAT : ABI_NATIVE;
	if (abi == ABI_COMPAT)
		bpf_probe_read_kernel(&arg0, sizeof(arg0), &COMPAT_ARG0(regs));
	else
		arg0 = tail.arg0;
#else
	bpf_probe_read_kernel(&arg0, sizeof(arg0), &NATIVE_ARG0(regs));
#endif
	count_call(slot, abi, arg0);
	return 0;
}
