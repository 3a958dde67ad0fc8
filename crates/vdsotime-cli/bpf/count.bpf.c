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
#include "helpers.h"

/* Set by user space before loading (read-only data, constant to the verifier). */
#define MAX_NUMBERS 24
/* The counted system call numbers; unused slots hold -1, no call's number. */
volatile const __s64 numbers[MAX_NUMBERS] = {
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
};
/* Bit i set: numbers[i] takes a clock id as its first argument. */
volatile const __u32 takes_clock = 0;
/* The viewer's PID namespace (device and inode of /proc/self/ns/pid); 0, 0: the
 * initial namespace, whose ids bpf_get_current_pid_tgid gives. */
volatile const __u64 pidns_dev = 0;
volatile const __u64 pidns_ino = 0;
/* Only this process (in the viewer's namespace), or 0 for every process. */
volatile const __u32 only_tgid = 0;

struct key {
	__u32 tgid;
	__u32 nr;
	__s32 clock; /* -1 for a call that takes none */
	__u32 pad;
};

/* Slots of `missed`. */
#define MISSED_FULL 0 /* counts or comms full: the event could not be counted */
#define MISSED_SLOTS 1

struct {
	MAP_UINT(type, BPF_MAP_TYPE_PERCPU_HASH);
	MAP_UINT(max_entries, 4096);
	MAP_TYPE(key, struct key);
	MAP_TYPE(value, __u64);
} counts SEC(".maps");

struct {
	MAP_UINT(type, BPF_MAP_TYPE_HASH);
	MAP_UINT(max_entries, 4096);
	MAP_TYPE(key, __u32);
	MAP_TYPE(value, char[16]);
} comms SEC(".maps");

struct {
	MAP_UINT(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	MAP_UINT(max_entries, MISSED_SLOTS);
	MAP_TYPE(key, __u32);
	MAP_TYPE(value, __u64);
} missed SEC(".maps");

static void miss(__u32 slot)
{
	__u64 *n = bpf_map_lookup_elem(&missed, &slot);
	if (n)
		*n += 1;
}

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
	__s64 nr = *(__s64 *)((char *)ctx + 8);
	int slot = -1;

#pragma unroll
	for (int i = 0; i < MAX_NUMBERS; i++) {
		if (nr == numbers[i]) {
			slot = i;
			break;
		}
	}
	if (slot < 0)
		return STOP;

	__u32 tgid;
	if (pidns_ino == 0) {
		tgid = bpf_get_current_pid_tgid() >> 32;
	} else {
		struct bpf_pidns_info ns = {};
		/* A task of another PID namespace has no id in the viewer's: its calls
		 * are counted under tgid 0, as the kernel reports them to perf. */
		tgid = bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns))
			? 0 : ns.tgid;
	}
	if (only_tgid != 0 && tgid != only_tgid)
		return PASS;

	struct key k = {
		.tgid = tgid,
		.nr = (__u32)nr,
		.clock = -1,
	};
	if ((takes_clock >> slot) & 1)
		k.clock = (__s32)(__u32) * (__u64 *)((char *)ctx + 16);

	__u64 *n = bpf_map_lookup_elem(&counts, &k);
	if (n) {
		*n += 1;
		return PASS;
	}
	/* First sight of this (process, call, clock): the process's name now. Taken
	 * again at each new key, so a name from before an exec (a forked child's first
	 * calls come before it) gives way to the program's own. */
	if (tgid != 0) {
		char comm[16] = {};
		bpf_get_current_comm(comm, sizeof(comm));
		bpf_map_update_elem(&comms, &tgid, comm, BPF_ANY);
	}
	__u64 one = 1;
	long err = bpf_map_update_elem(&counts, &k, &one, BPF_NOEXIST);
	if (err == -EEXIST) {
		n = bpf_map_lookup_elem(&counts, &k);
		if (n)
			*n += 1;
	} else if (err) {
		miss(MISSED_FULL);
	}
	return PASS;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
