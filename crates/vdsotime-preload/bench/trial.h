/* One timed trial of a path: `calls` back-to-back calls, ns per call returned. Shared by
 * bench.c (raw pointers, syscalls) and plt_trials.c (calls by name, through a PLT). */
#ifndef VDSOTIME_BENCH_TRIAL_H
#define VDSOTIME_BENCH_TRIAL_H

#include <time.h>

struct lane;
typedef double (*trial_fn)(const struct lane *, long calls);

/* One path of a row: how to time it and what it calls. */
struct lane {
	trial_fn trial;
	void *target;	     /* the function a pointer path calls (NULL for named calls) */
	int clock;	     /* the clock id, for clock_gettime and clock_getres */
	double (*now)(void); /* the timer around each trial, ns */
};

/* The trials of one set of names called through the calling object's PLT. */
struct plt_trials {
	trial_fn gettime, getres, gtod, time, getcpu, sched;
	/* Where this object's clock_gettime (or vdsotime_clock_gettime) is bound. */
	void *(*bound)(void);
};

/* Hides a value from the optimizer (it may have changed) / makes it count as used: the
 * clock id is never a compile-time constant, and every result field is consumed. */
#define OPAQUE(x) __asm__ volatile("" : "+r"(x))
#define SINK(x) __asm__ volatile("" : : "r"(x))

#define TRIAL(name, decl, call, use)                                                   \
	__attribute__((noinline)) static double name(const struct lane *l, long calls) \
	{                                                                              \
		decl;                                                                  \
		(void)l;                                                               \
		double t0 = l->now();                                                  \
		for (long i = 0; i < calls; i++) {                                     \
			call;                                                          \
			use;                                                           \
		}                                                                      \
		return (l->now() - t0) / (double)calls;                                \
	}

/* Consumes a C-style result: the return code, and both output fields when it is 0. */
#define USE_FIELDS(a, b)      \
	if (r == 0) {         \
		SINK(a);      \
		SINK(b);      \
	} else                \
		SINK(r)

#define TS_DECL                  \
	clockid_t id = l->clock; \
	struct timespec ts;      \
	int r
#define TS_USE USE_FIELDS(ts.tv_sec, ts.tv_nsec)
#define TV_DECL            \
	struct timeval tv; \
	int r
#define TV_USE USE_FIELDS(tv.tv_sec, tv.tv_usec)
#define CPU_DECL                    \
	unsigned cpu = 0, node = 0; \
	int r
#define CPU_USE USE_FIELDS(cpu, node)

#endif
