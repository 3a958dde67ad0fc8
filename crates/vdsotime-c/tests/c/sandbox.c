/*
 * A sandboxed program (tests/sandbox.rs): optionally vdsotime_init(), then a seccomp
 * allowlist whose default action kills the process (allowlist.h), then every clock the
 * vDSO serves (clock_gettime and clock_getres), gettimeofday, time and getcpu. Prints
 * "SANDBOX_OK" if every call succeeded.
 *
 * usage: sandbox init|at-load|forbidden
 *   init       vdsotime_init() before the filter
 *   at-load    no vdsotime_init(): the library bound its functions when it was loaded
 *   forbidden  the filter, then a system call it does not allow: the process must die
 *
 * Built against libvdsotime (shared or static), or with -DLIBC_NAMES to call the C
 * library's names, run under LD_PRELOAD of the preload library (whose constructor does
 * vdsotime_init): each name must then be the preload's (dladdr), so that the success is
 * not the C library's own.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <vdsotime.h>

#include "allowlist.h"

#ifdef LIBC_NAMES
#define CLOCK_GETTIME clock_gettime
#define CLOCK_GETRES clock_getres
#define GETTIMEOFDAY(tv) gettimeofday(tv, NULL)
#define TIME time
#define GETCPU getcpu
#else
#define CLOCK_GETTIME vdsotime_clock_gettime
#define CLOCK_GETRES vdsotime_clock_getres
#define GETTIMEOFDAY(tv) vdsotime_gettimeofday(tv, NULL)
#define TIME vdsotime_time
#define GETCPU vdsotime_getcpu
#endif

static char report[4096];
static size_t used;

static void say(const char *what, int ok)
{
	int n = snprintf(report + used, sizeof report - used, "%s: %s\n", what, ok ? "ok" : "FAILED");
	if (n > 0 && (size_t)n < sizeof report - used)
		used += (size_t)n;
}

#ifdef LIBC_NAMES
/* Each name is the preload's, resolved before the filter (dladdr reads files). */
static int bound_to_preload(void)
{
	void *fns[] = { (void *)clock_gettime, (void *)clock_getres, (void *)gettimeofday,
			(void *)time, (void *)getcpu };
	for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
		Dl_info info;
		if (dladdr(fns[i], &info) == 0 || info.dli_fname == NULL ||
		    strstr(info.dli_fname, "libvdsotime_preload") == NULL)
			return 0;
	}
	return 1;
}
#endif

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "init") != 0 && strcmp(argv[1], "at-load") != 0 &&
			  strcmp(argv[1], "forbidden") != 0)) {
		fprintf(stderr, "usage: sandbox init|at-load|forbidden\n");
		return 2;
	}
	if (strcmp(argv[1], "forbidden") == 0) {
		kill_allowlist();
		forbidden_call();
		printf("the forbidden system call was allowed\n");
		return 4;
	}
	int ok = 1;
#ifdef LIBC_NAMES
	ok &= bound_to_preload();
	say("the libc names are the preload's", ok);
	if (strcmp(argv[1], "at-load") != 0) {
		fprintf(stderr, "the preload binds at load: only at-load applies\n");
		return 2;
	}
#else
	if (strcmp(argv[1], "init") == 0)
		vdsotime_init();
#endif
	kill_allowlist();
	const struct {
		clockid_t id;
		const char *name;
	} clocks[] = {
		{ CLOCK_REALTIME, "REALTIME" },
		{ CLOCK_MONOTONIC, "MONOTONIC" },
		{ CLOCK_BOOTTIME, "BOOTTIME" },
		{ CLOCK_TAI, "TAI" },
		{ CLOCK_REALTIME_COARSE, "REALTIME_COARSE" },
		{ CLOCK_MONOTONIC_COARSE, "MONOTONIC_COARSE" },
		{ CLOCK_MONOTONIC_RAW, "MONOTONIC_RAW" },
	};
	for (size_t i = 0; i < sizeof clocks / sizeof clocks[0]; i++) {
		struct timespec ts = { 0, 0 }, res = { 0, 0 };
		int r = CLOCK_GETTIME(clocks[i].id, &ts) == 0 && ts.tv_sec > 0 &&
			CLOCK_GETRES(clocks[i].id, &res) == 0;
		say(clocks[i].name, r);
		ok &= r;
	}
	struct timeval tv = { 0, 0 };
	int r = GETTIMEOFDAY(&tv) == 0 && tv.tv_sec > 0;
	say("gettimeofday", r);
	ok &= r;
	r = TIME(NULL) > 0;
	say("time", r);
	ok &= r;
#ifndef NO_GETCPU /* defined where getcpu is a system call (no vDSO getcpu, no rseq area) */
	unsigned cpu = 9999, node = 9999;
	r = GETCPU(&cpu, &node) == 0 && cpu != 9999;
	say("getcpu", r);
	ok &= r;
#endif
	if (ok)
		say("SANDBOX_OK", 1);
	ssize_t w = write(1, report, used);
	(void)w;
	_exit(0);
}
