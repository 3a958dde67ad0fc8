/*
 * Checks the C clock functions against the raw system calls, zero tolerance:
 * a syscall reading before <= the function's reading <= a syscall reading after; the same
 * errno where the syscall fails, with the output left untouched; NULL handling as documented.
 *
 * Built twice by the Rust tests: as is, against libvdsotime (vdsotime_* names, shared and
 * static), and with -DLIBC_NAMES, calling the plain libc names, run under LD_PRELOAD of
 * libvdsotime_preload.so (it then also checks that each name is bound to the preload).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#ifdef LIBC_NAMES
#if !defined(__GLIBC__)
/* musl has getcpu only since 1.2.4: a weak reference, which the preload's definition binds. */
int getcpu(unsigned int *cpu, unsigned int *node) __attribute__((weak));
#endif
#define T_clock_gettime clock_gettime
#define T_clock_getres clock_getres
#define T_gettimeofday gettimeofday
#define T_time time
#define T_getcpu getcpu
#define MODE_NAMES "libc names (preload)"
#else
#include <vdsotime.h>
#define T_clock_gettime vdsotime_clock_gettime
#define T_clock_getres vdsotime_clock_getres
#define T_gettimeofday vdsotime_gettimeofday
#define T_time vdsotime_time
#define T_getcpu vdsotime_getcpu
#define MODE_NAMES "libvdsotime"
#endif

#include "check.h"
#include "raw.h"

/* Hidden from the optimiser, so that glibc's nonnull attributes cannot drop the NULL. */
static void *volatile null_ptr;

/* The kernel's CPU-clock encodings (MAKE_PROCESS_CPUCLOCK / MAKE_THREAD_CPUCLOCK / FD_TO_CLOCKID). */
static clockid_t process_clock(pid_t pid) { return (clockid_t)((~(unsigned)pid << 3) | 2); }
static clockid_t thread_clock(pid_t tid) { return (clockid_t)((~(unsigned)tid << 3) | 2 | 4); }
static clockid_t fd_clock(int fd) { return (clockid_t)((~(unsigned)fd << 3) | 3); }

#define SENTINEL 0x5a

static void check_clock(clockid_t c)
{
	for (int i = 0; i < 1000; i++) {
		struct timespec before, got, after;
		memset(&got, SENTINEL, sizeof got);
		long rb = sys_clock_gettime(c, &before);
		long r;
		CALL(T_clock_gettime(c, &got), r);
		long ra = sys_clock_gettime(c, &after);
		if (rb == 0 && ra == 0) {
			CHECK(r == 0, "clock %d: got error %ld, syscall succeeded", c, -r);
			if (r != 0)
				return;
			CHECK(ts_le(&before, &got) && ts_le(&got, &after),
			      "clock %d: %lld.%09ld not within [%lld.%09ld, %lld.%09ld]", c,
			      (long long)got.tv_sec, (long)got.tv_nsec, (long long)before.tv_sec,
			      (long)before.tv_nsec, (long long)after.tv_sec, (long)after.tv_nsec);
			CHECK(got.tv_nsec >= 0 && got.tv_nsec < 1000000000, "clock %d: nsec %ld", c,
			      (long)got.tv_nsec);
		} else {
			unsigned char untouched[sizeof got];
			memset(untouched, SENTINEL, sizeof untouched);
			CHECK(rb == ra && r == rb, "clock %d: errno %ld, syscall errno %ld/%ld", c, -r, -rb, -ra);
			CHECK(memcmp(&got, untouched, sizeof got) == 0, "clock %d: output written on error", c);
			break;
		}
	}

#ifndef LIBC_NAMES
	for (int i = 0; i < 1000; i++) {
		struct timespec before, after;
		struct vdsotime_timespec64 got;
		memset(&got, SENTINEL, sizeof got);
		long rb = sys_clock_gettime(c, &before);
		long r;
		CALL(vdsotime_clock_gettime64(c, &got), r);
		long ra = sys_clock_gettime(c, &after);
		if (rb == 0 && ra == 0) {
			struct timespec g = { .tv_sec = (time_t)got.tv_sec, .tv_nsec = (long)got.tv_nsec };
			CHECK(r == 0 && ts_le(&before, &g) && ts_le(&g, &after), "clock %d (64): out of bracket", c);
		} else {
			CHECK(r == rb, "clock %d (64): errno %ld, syscall errno %ld", c, -r, -rb);
			break;
		}
	}
#endif

	/* clock_getres: exactly the syscall's answer; NULL allowed. */
	struct timespec want, got;
	memset(&got, SENTINEL, sizeof got);
	memset(&want, SENTINEL, sizeof want);
	long rw = sys_clock_getres(c, &want);
	long r;
	CALL(T_clock_getres(c, &got), r);
	CHECK(r == rw, "getres %d: %ld vs syscall %ld", c, r, rw);
	CHECK(memcmp(&got, &want, sizeof got) == 0, "getres %d: %lld.%09ld vs syscall %lld.%09ld", c,
	      (long long)got.tv_sec, (long)got.tv_nsec, (long long)want.tv_sec, (long)want.tv_nsec);
	CALL(T_clock_getres(c, null_ptr), r);
	CHECK(r == sys_clock_getres(c, NULL), "getres %d NULL: %ld", c, r);
#ifndef LIBC_NAMES
	struct vdsotime_timespec64 got64;
	CALL(vdsotime_clock_getres64(c, &got64), r);
	CHECK(r == rw && (r != 0 || (got64.tv_sec == want.tv_sec && got64.tv_nsec == want.tv_nsec)),
	      "getres64 %d: %ld", c, r);
	CALL(vdsotime_clock_getres64(c, null_ptr), r);
	CHECK(r == rw, "getres64 %d NULL: %ld", c, r);
	CALL(vdsotime_clock_gettime64(c, null_ptr), r);
	CHECK(r == sys_clock_gettime(c, NULL), "gettime64 %d NULL: %ld", c, r);
#endif

	/* clock_gettime(c, NULL): EINVAL for a bad clock, else EFAULT, like the syscall. */
	CALL(T_clock_gettime(c, null_ptr), r);
	CHECK(r == sys_clock_gettime(c, NULL), "gettime %d NULL: %ld vs syscall %ld", c, r,
	      sys_clock_gettime(c, NULL));
}

static void check_gettimeofday(void)
{
	for (int i = 0; i < 1000; i++) {
		struct timeval before, got, after;
		struct timezone tz_sys, tz_got;
		memset(&tz_got, SENTINEL, sizeof tz_got);
		long r;
		CHECK(sys_gettimeofday(&before, &tz_sys) == 0, "syscall gettimeofday");
		CALL(T_gettimeofday(&got, &tz_got), r);
		CHECK(sys_gettimeofday(&after, NULL) == 0, "syscall gettimeofday");
		CHECK(r == 0 && tv_le(&before, &got) && tv_le(&got, &after),
		      "gettimeofday %lld.%06ld not within [%lld.%06ld, %lld.%06ld]", (long long)got.tv_sec,
		      (long)got.tv_usec, (long long)before.tv_sec, (long)before.tv_usec,
		      (long long)after.tv_sec, (long)after.tv_usec);
		CHECK(memcmp(&tz_got, &tz_sys, sizeof tz_got) == 0, "timezone %d/%d vs syscall %d/%d",
		      tz_got.tz_minuteswest, tz_got.tz_dsttime, tz_sys.tz_minuteswest, tz_sys.tz_dsttime);
		CALL(T_gettimeofday(&got, null_ptr), r);
		CHECK(r == 0, "gettimeofday tz NULL: %ld", r);
	}
	struct timezone tz_sys, tz_got;
	memset(&tz_got, SENTINEL, sizeof tz_got);
	long r;
	CALL(T_gettimeofday(null_ptr, &tz_got), r);
	sys_gettimeofday(NULL, &tz_sys);
	CHECK(r == 0 && memcmp(&tz_got, &tz_sys, sizeof tz_got) == 0, "gettimeofday(NULL, tz): %ld", r);
	CALL(T_gettimeofday(null_ptr, null_ptr), r);
	CHECK(r == 0, "gettimeofday(NULL, NULL): %ld", r);
#ifndef LIBC_NAMES
	for (int i = 0; i < 1000; i++) {
		struct timeval before, after;
		struct vdsotime_timeval64 got;
		CHECK(sys_gettimeofday(&before, NULL) == 0, "syscall gettimeofday");
		CALL(vdsotime_gettimeofday64(&got, &tz_got), r);
		CHECK(sys_gettimeofday(&after, NULL) == 0, "syscall gettimeofday");
		struct timeval g = { .tv_sec = (time_t)got.tv_sec, .tv_usec = (suseconds_t)got.tv_usec };
		CHECK(r == 0 && tv_le(&before, &g) && tv_le(&g, &after), "gettimeofday64 out of bracket");
		CHECK(memcmp(&tz_got, &tz_sys, sizeof tz_got) == 0, "gettimeofday64 timezone");
	}
	CALL(vdsotime_gettimeofday64(null_ptr, null_ptr), r);
	CHECK(r == 0, "gettimeofday64(NULL, NULL): %ld", r);
#endif
}

static void check_time(void)
{
	for (int i = 0; i < 1000; i++) {
		time_t stored = (time_t)-7;
		time_t before = sys_time();
		time_t got = T_time(&stored);
		time_t plain = T_time(NULL);
		time_t after = sys_time();
		CHECK(got == stored, "time(&t) returned %lld, stored %lld", (long long)got, (long long)stored);
		CHECK(before <= got && got <= plain && plain <= after, "time %lld, %lld not within [%lld, %lld]",
		      (long long)got, (long long)plain, (long long)before, (long long)after);
#ifndef LIBC_NAMES
		int64_t stored64 = -7;
		int64_t got64 = vdsotime_time64(&stored64);
		time_t after64 = sys_time();
		CHECK(got64 == stored64 && after <= got64 && got64 <= after64, "time64 %lld", (long long)got64);
		CHECK(vdsotime_time64(NULL) >= got64, "time64(NULL) went back");
#endif
	}
}

static void check_getcpu(void)
{
	cpu_set_t saved, one;
	CHECK(sched_getaffinity(0, sizeof saved, &saved) == 0, "sched_getaffinity");
	int tested = 0;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &saved))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof one, &one) != 0)
			continue;
		unsigned got_cpu = 9999, got_node = 9999, sys_cpu = 0, sys_node = 0;
		long r;
		CALL(T_getcpu(&got_cpu, &got_node), r);
		CHECK(syscall(SYS_getcpu, &sys_cpu, &sys_node, NULL) == 0, "syscall getcpu");
		CHECK(r == 0 && got_cpu == (unsigned)cpu && sys_cpu == (unsigned)cpu,
		      "pinned to %d: getcpu says %u, syscall %u", cpu, got_cpu, sys_cpu);
		CHECK(got_node == sys_node, "node %u vs syscall %u", got_node, sys_node);
		unsigned only = 9999;
		CALL(T_getcpu(&only, null_ptr), r);
		CHECK(r == 0 && only == (unsigned)cpu, "getcpu(&cpu, NULL): %u", only);
		only = 9999;
		CALL(T_getcpu(null_ptr, &only), r);
		CHECK(r == 0 && only == sys_node, "getcpu(NULL, &node): %u", only);
		CALL(T_getcpu(null_ptr, null_ptr), r);
		CHECK(r == 0, "getcpu(NULL, NULL): %ld", r);
#ifdef LIBC_NAMES
		CHECK(sched_getcpu() == cpu, "sched_getcpu %d pinned to %d", sched_getcpu(), cpu);
#else
		CHECK(vdsotime_sched_getcpu() == cpu, "vdsotime_sched_getcpu %d pinned to %d",
		      vdsotime_sched_getcpu(), cpu);
#endif
		tested++;
	}
	CHECK(sched_setaffinity(0, sizeof saved, &saved) == 0, "restore affinity");
	CHECK(tested > 0, "could not pin to any CPU");
}

#ifdef LIBC_NAMES
/* Each libc name must resolve into libvdsotime_preload.so. */
static void check_bound_to_preload(void)
{
	struct { const char *name; void *addr; } fns[] = {
		{ "clock_gettime", (void *)clock_gettime }, { "clock_getres", (void *)clock_getres },
		{ "gettimeofday", (void *)gettimeofday },   { "time", (void *)time },
		{ "getcpu", (void *)getcpu },               { "sched_getcpu", (void *)sched_getcpu },
	};
	for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
		Dl_info info;
		int ok = dladdr(fns[i].addr, &info) != 0 && info.dli_fname != NULL;
		CHECK(ok && strstr(info.dli_fname, "libvdsotime_preload.so") != NULL, "%s is bound to %s",
		      fns[i].name, ok ? info.dli_fname : "(unknown)");
	}
}
#endif

/* The first calls happen before main, from a constructor. */
static struct timespec early_before, early_got, early_after;
static int early_result = -2;

__attribute__((constructor)) static void early(void)
{
	sys_clock_gettime(CLOCK_MONOTONIC, &early_before);
	early_result = T_clock_gettime(CLOCK_MONOTONIC, &early_got);
	sys_clock_gettime(CLOCK_MONOTONIC, &early_after);
}

int main(void)
{
	CHECK(early_result == 0 && ts_le(&early_before, &early_got) && ts_le(&early_got, &early_after),
	      "call from a constructor before main: %d", early_result);
#ifdef LIBC_NAMES
	check_bound_to_preload();
#endif
	pid_t pid = getpid();
	pid_t tid = (pid_t)syscall(SYS_gettid);
	clockid_t clocks[] = {
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, /* the named clocks, and 10 (removed) */
		-1, 12, INT_MIN, INT_MAX,             /* invalid */
		process_clock(pid), thread_clock(tid), process_clock(0), /* CPU clocks of self */
		process_clock(0x3ffffff0),            /* CPU clock of a pid that does not exist */
		fd_clock(0), fd_clock(1000),          /* fd clocks of a non-clock fd and a closed one */
	};
	for (size_t i = 0; i < sizeof clocks / sizeof clocks[0]; i++)
		check_clock(clocks[i]);
	check_gettimeofday();
	check_time();
	check_getcpu();
	printf("api_test (%s%s, %zu-bit time_t): %d checks, %d failed\n", MODE_NAMES, MODE_TIME,
	       sizeof(time_t) * 8, checks, failures);
	return failures == 0 ? 0 : 1;
}
