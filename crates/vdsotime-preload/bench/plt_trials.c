/*
 * The named-call trials: each loop calls clock_gettime, time, ... by name, through the PLT of
 * the object this file is built into, exactly as a program does. Built three times by run.sh:
 *   into the bench program       its PLT is bound to the preload when run under LD_PRELOAD
 *   bench_glibc.so               loaded with RTLD_DEEPBIND, so its PLT is bound to libc.so.6
 *                                (its own dependency) ahead of the preload in the global scope
 *   bench_libvdsotime.so         -DVDSOTIME_NAMES, with libvdsotime.a linked in, loaded with
 *                                RTLD_DEEPBIND: its vdsotime_* calls reach its own copy of
 *                                libvdsotime's code through its PLT (run.sh says why not the .so)
 * so that every library column pays the one PLT hop its real callers pay.
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
#define GETTIME vdsotime_clock_gettime
#define GETRES vdsotime_clock_getres
#define GTOD vdsotime_gettimeofday
#define TIME vdsotime_time
#define GETCPU vdsotime_getcpu
/* libvdsotime has no sched_getcpu: its getcpu stands in. */
#define SCHED_GETCPU() (vdsotime_getcpu(&cpu, NULL) == 0 ? (int)cpu : -1)
#define SCHED_DECL unsigned cpu = 0; int c
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
