/* SPDX-License-Identifier: (MIT OR GPL-2.0-only) */
/*
 * What every `vdsotime top` counter shares, whatever it is attached to: the settings
 * user space writes before loading, the maps it reads, and count_call(), which adds 1
 * to a per-CPU counter keyed by (process, system call number, clock id, ABI).
 */
#ifndef VDSOTIME_COUNT_H
#define VDSOTIME_COUNT_H

#include "helpers.h"

/* Set by user space before loading (read-only data, constant to the verifier). */
#define MAX_NUMBERS 24
/* The counted system call numbers, by slot; unused slots hold -1, no call's number. */
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

/* The ABI a key's number is in (`abi` of struct key). */
#define ABI_OF_TASK 0 /* unknown here: the task's own, read with its executable's */
#define ABI_NATIVE 1  /* the kernel's own table */
#define ABI_COMPAT 2  /* x86_64's i386 table */

struct key {
	__u32 tgid;
	__u32 nr;
	__s32 clock; /* -1 for a call that takes none */
	__u32 abi;
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

static __always_inline void miss(__u32 slot)
{
	__u64 *n = bpf_map_lookup_elem(&missed, &slot);
	if (n)
		*n += 1;
}

/* Counts one call of numbers[slot], in `abi`, whose first argument is `arg0`. */
static __attribute__((noinline)) void count_call(int slot, __u32 abi, __u64 arg0)
{
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
		return;

	struct key k = {
		.tgid = tgid,
		.nr = (__u32)numbers[slot],
		.clock = -1,
		.abi = abi,
	};
	if ((takes_clock >> slot) & 1)
		k.clock = (__s32)(__u32)arg0;

	__u64 *n = bpf_map_lookup_elem(&counts, &k);
	if (n) {
		*n += 1;
		return;
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
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#endif
