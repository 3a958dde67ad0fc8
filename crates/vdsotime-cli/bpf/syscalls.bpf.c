/* SPDX-License-Identifier: (MIT OR GPL-2.0-only) */
/*
 * `vdsotime top`'s per-call tracepoint counter: one program attached to the tracepoint
 * syscalls:sys_enter_<name> of each counted call. The kernel tests a bitmap of the
 * enabled calls before it builds any record, so other system calls pay only that test.
 * The record: `__syscall_nr` an int at offset 8, the arguments 8 bytes each from offset
 * 16 (user space checks it in tracefs). These tracepoints fire for native tasks only:
 * the number is the kernel's own table's.
 */
#include "count.h"

SEC("tracepoint/syscalls")
int count_syscall(void *ctx)
{
	int slot = slot_of(*(__s32 *)((char *)ctx + 8));

	if (slot >= 0)
		count_call(slot, ABI_NATIVE, *(__u64 *)((char *)ctx + 16));
	return 1;
}
