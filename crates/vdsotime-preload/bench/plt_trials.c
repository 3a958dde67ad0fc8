/*
 * The named-call trials: each loop calls clock_gettime, time, ... by name, through the PLT of
 * the object this file is built into, exactly as a program does. Built by run.sh into:
 *   bench_glibc.so               loaded with RTLD_DEEPBIND, so its PLT is bound to libc.so.6
 *                                (its own dependency) ahead of the preload in the global scope
 *   bench_libvdsotime.so         -DVDSOTIME_NAMES, linked with -lvdsotime, loaded with
 *                                RTLD_DEEPBIND: its vdsotime_* calls reach libvdsotime.so.0
 *   bench_preload.so             loaded without RTLD_DEEPBIND: under LD_PRELOAD its PLT is
 *                                bound to the preload
 *   the bench program            the same, when no bench_preload.so is given
 * so that every library column pays the one PLT hop its real callers pay, from the same code.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stddef.h>
#include <sys/time.h>
#include <time.h>

#include "trial.h"

#ifdef VDSOTIME_NAMES
/* libvdsotime's plain names (64-bit targets: the C library's own time types). */
int vdsotime_clock_gettime(clockid_t clock, struct timespec *ts);
int vdsotime_clock_getres(clockid_t clock, struct timespec *res);
int vdsotime_gettimeofday(struct timeval *tv, void *tz);
time_t vdsotime_time(time_t *t);
int vdsotime_getcpu(unsigned *cpu, unsigned *node);
int vdsotime_sched_getcpu(void);
#define GETTIME vdsotime_clock_gettime
#define GETRES vdsotime_clock_getres
#define GTOD vdsotime_gettimeofday
#define TIME vdsotime_time
#define GETCPU vdsotime_getcpu
#define SCHED_GETCPU() vdsotime_sched_getcpu()
#define SCHED_DECL int c
#else
#define GETTIME clock_gettime
#define GETRES clock_getres
#define GTOD gettimeofday
#define TIME time
#define GETCPU getcpu
#define SCHED_GETCPU() sched_getcpu()
#define SCHED_DECL int c
#endif

TRIAL(gettime, TS_DECL, OPAQUE(id); r = GETTIME(id, &ts), TS_USE)
TRIAL(getres, TS_DECL, OPAQUE(id); r = GETRES(id, &ts), TS_USE)
TRIAL(gtod, TV_DECL, r = GTOD(&tv, NULL), TV_USE)
TRIAL(time_, time_t t, t = TIME(NULL), SINK(t))
TRIAL(getcpu_, CPU_DECL, r = GETCPU(&cpu, &node), CPU_USE)
TRIAL(sched, SCHED_DECL, c = SCHED_GETCPU(), SINK(c))

static void *bound(void)
{
	return (void *)&GETTIME;
}

const struct plt_trials plt_trials = {gettime, getres, gtod, time_, getcpu_, sched, bound};
