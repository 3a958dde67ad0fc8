/*
 * The C entry points, measured in interleaved rounds as `vdsotime bench` measures the Rust
 * ones: each row (a function and clock) runs ROUNDS rounds; a round runs one trial of every
 * path of the row, in an order rotated by one path each round (round r starts at path r mod n),
 * so that a drifting machine slows every path of a round alike. A trial is ~TRIAL_US of
 * back-to-back calls, sized per path from a warm-up. Reported per path: ns per call in its
 * fastest trial, and the median over rounds of its trial divided by raw's trial in the same
 * round, with the interquartile range [q1-q3].
 *
 * The paths, all in this one process (run.sh runs it under LD_PRELOAD):
 *   raw          the vDSO symbol through a function pointer (dlsym on the "linux-vdso.so.1",
 *                on i386 "linux-gate.so.1", handle glibc keeps for the vDSO): the floor
 *   glibc        clock_gettime, time, ... by name through the PLT of bench_glibc.so (-g), which
 *                is loaded with RTLD_DEEPBIND so that its names bind to libc.so.6, not the preload
 *   libvdsotime  vdsotime_* by name through the PLT of bench_libvdsotime.so (-l), which is
 *                linked with -lvdsotime and loaded with RTLD_DEEPBIND the same way
 *   preload      clock_gettime, time, ... by name through the PLT of bench_preload.so (-p; else
 *                this program's own), loaded without RTLD_DEEPBIND: under
 *                LD_PRELOAD=libvdsotime_preload.so its names bind to the preload, as a
 *                preloaded program's do. The three library columns thus run the same machine
 *                code (one source, one compiler, the same offsets in each object): a loop in
 *                the program itself measured 10-15% slower on a 3 ns call than the same loop
 *                in a shared object, with glibc's function alike.
 *   syscall      syscall(2)
 * Every library column thus pays the one PLT hop its real callers pay (about one cycle, which is
 * 10% of a 3 ns call: a pointer for one column and a PLT for another would not compare). Where
 * each column's names are bound is checked with dladdr and printed.
 *
 * usage: bench [-r ROUNDS] [-t TRIAL_US] [-c CALLS] [-g BENCH_GLIBC_SO] [-l BENCH_LIBVDSOTIME_SO]
 *              [-p BENCH_PRELOAD_SO]
 * Output: the method line, a Markdown table of ns per call and one of ratios to raw.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "measure.h"
#include "table.h"
#include "trial.h"

typedef int (*gettime_fn)(clockid_t, struct timespec *);
typedef int (*gtod_fn)(struct timeval *, void *);
typedef time_t (*time_fn)(time_t *);
typedef int (*getcpu3_fn)(unsigned *, unsigned *, void *);

extern const struct plt_trials plt_trials; /* plt_trials.c, built into this program */

static gettime_fn timer; /* the raw vDSO clock_gettime if found: cheap, and no column's */

static double now_ns(void)
{
	struct timespec ts;
	if (!timer || timer(CLOCK_MONOTONIC, &ts) != 0)
		syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

TRIAL(empty_loop, , , __asm__ volatile(""))
TRIAL(gettime_ptr, TS_DECL; gettime_fn f = (gettime_fn)l->target, OPAQUE(id); r = f(id, &ts), TS_USE)
TRIAL(gettime_sys, TS_DECL, OPAQUE(id); r = (int)syscall(SYS_clock_gettime, id, &ts), TS_USE)
TRIAL(getres_sys, TS_DECL, OPAQUE(id); r = (int)syscall(SYS_clock_getres, id, &ts), TS_USE)
TRIAL(gtod_ptr, TV_DECL; gtod_fn f = (gtod_fn)l->target, r = f(&tv, NULL), TV_USE)
TRIAL(gtod_sys, TV_DECL, r = (int)syscall(SYS_gettimeofday, &tv, NULL), TV_USE)
TRIAL(time_ptr, time_t t; time_fn f = (time_fn)l->target, t = f(NULL), SINK(t))
#ifdef SYS_time
TRIAL(time_sys, long t, t = syscall(SYS_time, NULL), SINK(t))
#else
#define time_sys NULL
#endif
TRIAL(getcpu_ptr, CPU_DECL; getcpu3_fn f = (getcpu3_fn)l->target, r = f(&cpu, &node, NULL), CPU_USE)
TRIAL(getcpu_sys, CPU_DECL, r = (int)syscall(SYS_getcpu, &cpu, &node, NULL), CPU_USE)

enum { RAW, GLIBC, LIB, PRELOAD, SYSCALL, PATHS };
enum kind { GETTIME, GETRES, GTOD, TIME, GETCPU, SCHED };
static const char *const path_name[PATHS] = {"raw", "glibc", "libvdsotime", "preload", "syscall"};

/* Per kind: the vDSO symbol's plain name and its raw and syscall trials. (clock_getres's
 * pointer trial is clock_gettime's: same signature. sched_getcpu's floor is the vDSO getcpu.) */
static const struct {
	const char *vdso;
	trial_fn raw, sys;
} kinds[] = {
	[GETTIME] = {"clock_gettime", gettime_ptr, gettime_sys},
	[GETRES] = {"clock_getres", gettime_ptr, getres_sys},
	[GTOD] = {"gettimeofday", gtod_ptr, gtod_sys},
	[TIME] = {"time", time_ptr, time_sys},
	[GETCPU] = {"getcpu", getcpu_ptr, getcpu_sys},
	[SCHED] = {"getcpu", getcpu_ptr, getcpu_sys},
};

static trial_fn named(const struct plt_trials *t, enum kind k)
{
	if (!t)
		return NULL;
	switch (k) {
	case GETTIME: return t->gettime;
	case GETRES: return t->getres;
	case GTOD: return t->gtod;
	case TIME: return t->time;
	case GETCPU: return t->getcpu;
	case SCHED: return t->sched;
	}
	return NULL;
}

struct row {
	const char *label;
	enum kind kind;
	int clock;
};

static const struct row rows[] = {
	{"clock_gettime(REALTIME)", GETTIME, CLOCK_REALTIME},
	{"clock_gettime(MONOTONIC)", GETTIME, CLOCK_MONOTONIC},
	{"clock_gettime(PROCESS_CPUTIME_ID)", GETTIME, CLOCK_PROCESS_CPUTIME_ID},
	{"clock_gettime(THREAD_CPUTIME_ID)", GETTIME, CLOCK_THREAD_CPUTIME_ID},
	{"clock_gettime(MONOTONIC_RAW)", GETTIME, CLOCK_MONOTONIC_RAW},
	{"clock_gettime(REALTIME_COARSE)", GETTIME, CLOCK_REALTIME_COARSE},
	{"clock_gettime(MONOTONIC_COARSE)", GETTIME, CLOCK_MONOTONIC_COARSE},
	{"clock_gettime(BOOTTIME)", GETTIME, CLOCK_BOOTTIME},
	{"clock_gettime(REALTIME_ALARM)", GETTIME, CLOCK_REALTIME_ALARM},
	{"clock_gettime(BOOTTIME_ALARM)", GETTIME, CLOCK_BOOTTIME_ALARM},
	{"clock_gettime(TAI)", GETTIME, CLOCK_TAI},
	{"clock_gettime(id 12)", GETTIME, 12},
	{"clock_gettime(id 16)", GETTIME, 16},
	{"clock_getres(MONOTONIC)", GETRES, CLOCK_MONOTONIC},
	{"clock_getres(MONOTONIC_COARSE)", GETRES, CLOCK_MONOTONIC_COARSE},
	{"clock_getres(PROCESS_CPUTIME_ID)", GETRES, CLOCK_PROCESS_CPUTIME_ID},
	{"gettimeofday()", GTOD, 0},
	{"time()", TIME, 0},
	{"getcpu()", GETCPU, 0},
	{"sched_getcpu()", SCHED, 0},
};
#define NROWS (sizeof rows / sizeof rows[0])

static void *vdso;
static const struct plt_trials *by_path[PATHS]; /* the named-call trials of each column */

/* The vDSO's symbol for `name`: __vdso_NAME (x86, riscv, ...) or __kernel_NAME (arm64, ppc,
 * s390). Its structures have `long` seconds: the C library's only where time_t is a long (every
 * 64-bit target, and 32-bit ones built without _TIME_BITS=64). */
static void *vdso_symbol(const char *name)
{
	char buf[64];
	void *p = NULL;
	if (!vdso || sizeof(time_t) != sizeof(long))
		return NULL;
	snprintf(buf, sizeof buf, "__vdso_%s", name);
	if (!(p = dlsym(vdso, buf))) {
		snprintf(buf, sizeof buf, "__kernel_%s", name);
		p = dlsym(vdso, buf);
	}
	return p;
}

/* The file name of the object `p` lives in. */
static const char *object_of(void *p)
{
	Dl_info info;
	if (!p || !dladdr(p, &info) || !info.dli_fname)
		return "?";
	const char *slash = strrchr(info.dli_fname, '/');
	return slash ? slash + 1 : info.dli_fname;
}

/* The named-call trials of the object at `path`, loaded so that its names bind to its own
 * dependencies first (`deep`), or through the global scope, where the preload comes first. */
static const struct plt_trials *load_trials(const char *path, int deep)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | (deep ? RTLD_DEEPBIND : 0));
	const struct plt_trials *t = h ? dlsym(h, "plt_trials") : NULL;
	if (!t) {
		fprintf(stderr, "bench: %s: %s\n", path, dlerror());
		exit(1);
	}
	return t;
}

/* Fills the lanes of `row` (the paths that exist here); returns how many, sets *raw to the
 * raw lane's index or -1. */
static int lanes_of(const struct row *row, struct lane *out, int *path, int *raw)
{
	int n = 0;
	*raw = -1;
	for (int p = 0; p < PATHS; p++) {
		struct lane l = {NULL, NULL, row->clock, now_ns};
		if (p == RAW) {
			l.target = vdso_symbol(kinds[row->kind].vdso);
			l.trial = l.target ? kinds[row->kind].raw : NULL;
			*raw = l.trial ? n : -1;
		} else if (p == SYSCALL) {
			l.trial = kinds[row->kind].sys;
		} else {
			l.trial = named(by_path[p], row->kind);
		}
		if (!l.trial)
			continue;
		path[n] = p;
		out[n++] = l;
	}
	return n;
}

static void usage(void)
{
	fprintf(stderr, "usage: bench [-r ROUNDS] [-t TRIAL_US] [-c CALLS] [-g BENCH_GLIBC_SO] [-l BENCH_LIBVDSOTIME_SO] [-p BENCH_PRELOAD_SO]\n");
	exit(2);
}

/* Prints the method line and the bindings of each named column. */
static void print_header(const struct plan *plan, double overhead)
{
	struct utsname u;
	uname(&u);
	printf("kernel %s (%s) | glibc %s\n", u.release, u.machine, gnu_get_libc_version());
	printf("interleaved: %d rounds, each one trial of every path of a row in rotated order, ", plan->rounds);
	if (plan->calls)
		printf("trials of %ld calls", plan->calls);
	else
		printf("trials of ~%.0f us each", plan->trial_ns / 1e3);
	printf("; every ns figure includes %.2f ns per call for the timing loop itself (the loop timed with no call in it)\n", overhead);
	printf("named calls bound to: glibc -> %s, libvdsotime -> %s, preload -> %s\n",
	       by_path[GLIBC] ? object_of(by_path[GLIBC]->bound()) : "-",
	       by_path[LIB] ? object_of(by_path[LIB]->bound()) : "-",
	       by_path[PRELOAD] ? object_of(by_path[PRELOAD]->bound()) : "- (not run under the preload)");
}

int main(int argc, char **argv)
{
	struct plan plan = {201, 100e3, 0};
	const struct plt_trials *preloaded = &plt_trials;
	for (int opt; (opt = getopt(argc, argv, "r:t:c:g:l:p:")) != -1;) {
		switch (opt) {
		case 'r': plan.rounds = atoi(optarg); break;
		case 't': plan.trial_ns = atof(optarg) * 1e3; break;
		case 'c': plan.calls = atol(optarg); break;
		case 'g': by_path[GLIBC] = load_trials(optarg, 1); break;
		case 'l': by_path[LIB] = load_trials(optarg, 1); break;
		case 'p': preloaded = load_trials(optarg, 0); break;
		default: usage();
		}
	}
	if (plan.rounds < 1 || !(plan.trial_ns > 0) || plan.calls < 0 || optind != argc)
		usage();
	/* The plain names (of -p's object, else this program's) are the preload's column only if
	 * the preload has them. */
	if (strstr(object_of(preloaded->bound()), "vdsotime_preload"))
		by_path[PRELOAD] = preloaded;
	else
		fprintf(stderr, "bench: clock_gettime is not the preload's: no preload column (run.sh runs this under LD_PRELOAD)\n");

	/* Stay on one CPU: steadier numbers, and getcpu always answers the same. */
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
	sched_setaffinity(0, sizeof one, &one);

	vdso = dlopen("linux-vdso.so.1", RTLD_NOLOAD | RTLD_LAZY);
	if (!vdso) /* i386's name for it */
		vdso = dlopen("linux-gate.so.1", RTLD_NOLOAD | RTLD_LAZY);
	timer = (gettime_fn)vdso_symbol("clock_gettime");

	struct lane empty = {empty_loop, NULL, 0, now_ns};
	struct result overhead;
	measure(&empty, 1, -1, &plan, &overhead);
	print_header(&plan, overhead.ns);

	struct table ns_table, ratio_table;
	const char *ns_head[PATHS + 1] = {"function"}, *ratio_head[PATHS] = {"function"};
	char ratio_names[PATHS][32];
	for (int p = 0; p < PATHS; p++)
		ns_head[p + 1] = path_name[p];
	for (int p = 1; p < PATHS; p++) {
		snprintf(ratio_names[p], sizeof ratio_names[p], "%s/raw", path_name[p]);
		ratio_head[p] = ratio_names[p];
	}
	table_init(&ns_table, PATHS + 1, ns_head);
	table_init(&ratio_table, PATHS, ratio_head);
	for (size_t r = 0; r < NROWS; r++) {
		struct lane lanes[PATHS];
		struct result res[PATHS];
		int path[PATHS], raw;
		int n = lanes_of(&rows[r], lanes, path, &raw);
		measure(lanes, n, raw, &plan, res);
		char ns_cells[PATHS + 1][TABLE_CELL], ratio_cells[PATHS][TABLE_CELL];
		for (int p = 0; p <= PATHS; p++)
			snprintf(ns_cells[p], TABLE_CELL, "%s", p ? "-" : rows[r].label);
		for (int p = 0; p < PATHS; p++)
			snprintf(ratio_cells[p], TABLE_CELL, "%s", p ? "-" : rows[r].label);
		for (int i = 0; i < n; i++) {
			format_ns(ns_cells[path[i] + 1], res[i].ns);
			if (path[i] != RAW && res[i].med >= 0)
				format_spread(ratio_cells[path[i]], res[i].med, res[i].q1, res[i].q3);
		}
		table_add(&ns_table, (const char(*)[TABLE_CELL])ns_cells);
		table_add(&ratio_table, (const char(*)[TABLE_CELL])ratio_cells);
	}
	table_print(&ns_table);
	printf("\nratio to raw (the vDSO symbol through a pointer), median [q1-q3] over %d rounds:\n", plan.rounds);
	table_print(&ratio_table);
	return 0;
}
