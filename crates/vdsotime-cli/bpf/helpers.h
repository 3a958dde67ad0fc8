/* SPDX-License-Identifier: (MIT OR GPL-2.0-only) */
/*
 * The few declarations the counters need, written for this project: the map and
 * attribute constants and the helper ids are the kernel's UAPI numbers
 * (include/uapi/linux/bpf.h: enum bpf_map_type, BPF_NOEXIST, enum bpf_func_id).
 */
#ifndef VDSOTIME_BPF_HELPERS_H
#define VDSOTIME_BPF_HELPERS_H

typedef unsigned char __u8;
typedef unsigned int __u32;
typedef int __s32;
typedef unsigned long long __u64;
typedef long long __s64;

/* enum bpf_map_type */
#define BPF_MAP_TYPE_HASH 1
#define BPF_MAP_TYPE_PERCPU_HASH 5
#define BPF_MAP_TYPE_PERCPU_ARRAY 6

/* map_update_elem flags */
#define BPF_ANY 0
#define BPF_NOEXIST 1

/* errno values the program tests */
#define EEXIST 17

#define SEC(name) __attribute__((section(name), used))
#define __always_inline inline __attribute__((always_inline))

/* BTF-defined maps: each field's value is carried by the type of a pointer. */
#define MAP_UINT(name, val) int(*name)[val]
#define MAP_TYPE(name, val) typeof(val) *name

/* The pid and tgid of a task in a PID namespace (struct bpf_pidns_info). */
struct bpf_pidns_info {
	__u32 pid;
	__u32 tgid;
};

/* enum bpf_func_id: 1, 2, 14, 16, 113, 120. */
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value,
				   __u64 flags) = (void *)2;
static __u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;
static long (*bpf_get_current_comm)(void *buf, __u32 size) = (void *)16;
static long (*bpf_probe_read_kernel)(void *dst, __u32 size, const void *src) = (void *)113;
static long (*bpf_get_ns_current_pid_tgid)(__u64 dev, __u64 ino, struct bpf_pidns_info *nsdata,
					   __u32 size) = (void *)120;

#endif
