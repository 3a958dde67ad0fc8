/*
 * ns per call of each clock function, through glibc, libvdsotime, the preload and the raw
 * system call: the fastest of 7 trials of 1M calls each. Direct calls, as a program makes them
 * (through the PLT), so that the numbers include what a real caller pays.
 *
 * usage: bench SET...   SET is glibc, preload (both call the libc names: run `preload` under
 * LD_PRELOAD=libvdsotime_preload.so), lib (the vdsotime_* names) or syscall.
 * Output: one "function<TAB>set<TAB>ns" line per measurement. bench/run.sh makes the table.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <vdsotime.h>

#define CALLS 1000000L
#define TRIALS 7

static volatile long sink;

static double now_ns(void)
{
	struct timespec ts;
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#define BENCH(name, set, stmt)                                           \
	do {                                                             \
		double best = 1e300;                                     \
		long acc = 0;                                            \
		for (int t_ = 0; t_ < TRIALS; t_++) {                    \
			double start = now_ns();                         \
			for (long i_ = 0; i_ < CALLS; i_++) {            \
				stmt;                                    \
			}                                                \
			double took = now_ns() - start;                  \
			if (took < best)                                 \
				best = took;                             \
		}                                                        \
		sink = acc;                                              \
		printf("%s\t%s\t%.1f\n", name, set, best / CALLS);       \
		fflush(stdout);                                          \
	} while (0)

static void libc_names(const char *set)
{
	struct timespec ts;
	struct timeval tv;
	unsigned cpu;
	BENCH("clock_gettime(MONOTONIC)", set, clock_gettime(CLOCK_MONOTONIC, &ts); acc += ts.tv_nsec);
	BENCH("clock_gettime(REALTIME)", set, clock_gettime(CLOCK_REALTIME, &ts); acc += ts.tv_nsec);
	BENCH("clock_gettime(MONOTONIC_COARSE)", set, clock_gettime(CLOCK_MONOTONIC_COARSE, &ts); acc += ts.tv_nsec);
	BENCH("gettimeofday", set, gettimeofday(&tv, NULL); acc += tv.tv_usec);
	BENCH("time", set, acc += time(NULL));
	BENCH("getcpu", set, getcpu(&cpu, NULL); acc += cpu);
	BENCH("sched_getcpu", set, acc += sched_getcpu());
	BENCH("clock_getres(MONOTONIC)", set, clock_getres(CLOCK_MONOTONIC, &ts); acc += ts.tv_nsec);
}

static void lib_names(const char *set)
{
	struct timespec ts;
	struct timeval tv;
	unsigned cpu;
	BENCH("clock_gettime(MONOTONIC)", set, vdsotime_clock_gettime(CLOCK_MONOTONIC, &ts); acc += ts.tv_nsec);
	BENCH("clock_gettime(REALTIME)", set, vdsotime_clock_gettime(CLOCK_REALTIME, &ts); acc += ts.tv_nsec);
	BENCH("clock_gettime(MONOTONIC_COARSE)", set, vdsotime_clock_gettime(CLOCK_MONOTONIC_COARSE, &ts); acc += ts.tv_nsec);
	BENCH("gettimeofday", set, vdsotime_gettimeofday(&tv, NULL); acc += tv.tv_usec);
	BENCH("time", set, acc += vdsotime_time(NULL));
	BENCH("getcpu", set, vdsotime_getcpu(&cpu, NULL); acc += cpu);
	BENCH("sched_getcpu", set, vdsotime_getcpu(&cpu, NULL); acc += cpu);
	BENCH("clock_getres(MONOTONIC)", set, vdsotime_clock_getres(CLOCK_MONOTONIC, &ts); acc += ts.tv_nsec);
}

static void syscalls(const char *set)
{
	struct timespec ts;
	struct timeval tv;
	unsigned cpu;
	BENCH("clock_gettime(MONOTONIC)", set, syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts); acc += ts.tv_nsec);
	BENCH("clock_gettime(REALTIME)", set, syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts); acc += ts.tv_nsec);
	BENCH("clock_gettime(MONOTONIC_COARSE)", set, syscall(SYS_clock_gettime, CLOCK_MONOTONIC_COARSE, &ts); acc += ts.tv_nsec);
	BENCH("gettimeofday", set, syscall(SYS_gettimeofday, &tv, NULL); acc += tv.tv_usec);
#ifdef SYS_time
	BENCH("time", set, acc += syscall(SYS_time, NULL));
#endif
	BENCH("getcpu", set, syscall(SYS_getcpu, &cpu, NULL, NULL); acc += cpu);
	BENCH("sched_getcpu", set, syscall(SYS_getcpu, &cpu, NULL, NULL); acc += cpu);
	BENCH("clock_getres(MONOTONIC)", set, syscall(SYS_clock_getres, CLOCK_MONOTONIC, &ts); acc += ts.tv_nsec);
}

int main(int argc, char **argv)
{
	/* Stay on one CPU: steadier numbers, and getcpu always answers the same. */
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
	sched_setaffinity(0, sizeof one, &one);

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "glibc") == 0 || strcmp(argv[i], "preload") == 0)
			libc_names(argv[i]);
		else if (strcmp(argv[i], "lib") == 0)
			lib_names(argv[i]);
		else if (strcmp(argv[i], "syscall") == 0)
			syscalls(argv[i]);
		else {
			fprintf(stderr, "bench: unknown set %s (glibc, preload, lib, syscall)\n", argv[i]);
			return 2;
		}
	}
	return 0;
}
