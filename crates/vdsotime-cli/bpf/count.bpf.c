/* SPDX-License-Identifier: (MIT OR GPL-2.0-only) */
/*
 * `vdsotime top`'s counter: on every system call entry (the classic
 * raw_syscalls/sys_enter tracepoint), if the call is one of the time calls user space
 * named, add 1 to a per-CPU counter keyed by (process, system call number, clock id).
 * No per-event record leaves the kernel: user space reads the maps once per refresh.
 *
 * The record layout is the 64-bit one (`id` a long at offset 8, `args` six unsigned
 * longs from offset 16); user space checks it in tracefs before loading this program.
 *
 * The number is the task's own ABI's: a 32-bit (compat) task on a 64-bit kernel enters
 * with its 32-bit table's number, which may be another call's number in the native
 * table. This program cannot tell the two apart; user space reads each number with the
 * ABI of the process's executable, as the perf backend does.
 */
#include "count.h"

/*
 * The return value: on a classic tracepoint, 0 stops the event from reaching every perf
 * event open on that tracepoint, this program's and other tools' alike (the kernel's
 * perf_trace_run_bpf_submit); 1 passes it on. A time call is passed on, so a perf
 * tracer of the time calls (`vdsotime top --backend perf`, perf trace -e ...) running
 * beside this one misses none; any other call is stopped here, which spares every other
 * system call of the host the perf event's work but hides it from other perf users of
 * raw_syscalls:sys_enter while this program is attached.
 */
#define PASS 1
#define STOP 0

SEC("tracepoint/raw_syscalls/sys_enter")
int count_sys_enter(void *ctx)
{
	int slot = slot_of(*(__s64 *)((char *)ctx + 8));

	if (slot < 0)
		return STOP;

	count_call(slot, ABI_OF_TASK, *(__u64 *)((char *)ctx + 16));
	return PASS;
}
