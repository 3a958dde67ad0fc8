/*
 * libvdsotime against the C library's own functions in one program linked as static.sh links
 * it (-static unless told otherwise): for each function, glibc's and libvdsotime's in
 * interleaved rounds (crates/vdsotime-preload/bench/measure.h: one trial of each per round,
 * in rotated order). Reported per path: ns per call in its fastest trial; for libvdsotime, the
 * median over rounds of its trial divided by glibc's in the same round, with the
 * interquartile range [q1-q3]. The process is pinned to one CPU, so that sched_getcpu and
 * getcpu answer from the same CPU all along.
 *
 * usage: static [-r ROUNDS] [-t TRIAL_US]
 */
#define _GNU_SOURCE
#include <gnu/libc-version.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <vdsotime.h>

#include "measure.h"
#include "table.h"
#include "trial.h"

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

TRIAL(glibc_sched, int r, r = sched_getcpu(), SINK(r))
TRIAL(ours_sched, int r, r = vdsotime_sched_getcpu(), SINK(r))
TRIAL(glibc_getcpu, CPU_DECL, r = getcpu(&cpu, &node), CPU_USE)
TRIAL(ours_getcpu, CPU_DECL, r = vdsotime_getcpu(&cpu, &node), CPU_USE)
TRIAL(glibc_gettime, TS_DECL, OPAQUE(id); r = clock_gettime(id, &ts), TS_USE)
TRIAL(ours_gettime, TS_DECL, OPAQUE(id); r = vdsotime_clock_gettime(id, &ts), TS_USE)
TRIAL(glibc_gtod, TV_DECL, r = gettimeofday(&tv, NULL), TV_USE)
TRIAL(ours_gtod, TV_DECL, r = vdsotime_gettimeofday(&tv, NULL), TV_USE)
TRIAL(glibc_time, time_t t, t = time(NULL), SINK(t))
TRIAL(ours_time, time_t t, t = vdsotime_time(NULL), SINK(t))
TRIAL(glibc_random, unsigned char buf[16]; ssize_t r, r = getrandom(buf, sizeof buf, 0), SINK(r))
TRIAL(ours_random, unsigned char buf[16]; ssize_t r, r = vdsotime_getrandom(buf, sizeof buf, 0), SINK(r))

static const struct {
	const char *name;
	trial_fn glibc, ours;
	int clock;
} rows[] = {
	{ "sched_getcpu()", glibc_sched, ours_sched, 0 },
	{ "getcpu()", glibc_getcpu, ours_getcpu, 0 },
	{ "clock_gettime(MONOTONIC)", glibc_gettime, ours_gettime, CLOCK_MONOTONIC },
	{ "gettimeofday()", glibc_gtod, ours_gtod, 0 },
	{ "time()", glibc_time, ours_time, 0 },
	{ "getrandom(16 bytes)", glibc_random, ours_random, 0 },
};

static void usage(void)
{
	fprintf(stderr, "usage: static [-r ROUNDS] [-t TRIAL_US]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct plan plan = { 201, 100e3, 0 };
	int opt;
	while ((opt = getopt(argc, argv, "r:t:")) != -1) {
		if (opt == 'r')
			plan.rounds = atoi(optarg);
		else if (opt == 't')
			plan.trial_ns = atof(optarg) * 1e3;
		else
			usage();
	}
	if (plan.rounds < 1 || plan.trial_ns <= 0)
		usage();
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
	if (sched_setaffinity(0, sizeof one, &one) != 0)
		perror("static: sched_setaffinity (not pinned)");

	struct utsname u;
	uname(&u);
	printf("kernel %s (%s) | glibc %s | %s\n", u.release, u.machine, gnu_get_libc_version(),
	       LINKED_AS);
	printf("interleaved: %d rounds of one ~%.0f us trial of each path, rotated order\n\n",
	       plan.rounds, plan.trial_ns / 1e3);
	struct table t;
	const char *head[] = { "function", "glibc ns", "libvdsotime ns", "libvdsotime / glibc" };
	table_init(&t, 4, head);
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct lane lanes[2] = {
			{ rows[i].glibc, NULL, rows[i].clock, now_ns },
			{ rows[i].ours, NULL, rows[i].clock, now_ns },
		};
		struct result res[2];
		measure(lanes, 2, 0, &plan, res);
		char cells[4][TABLE_CELL];
		snprintf(cells[0], TABLE_CELL, "%s", rows[i].name);
		format_ns(cells[1], res[0].ns);
		format_ns(cells[2], res[1].ns);
		format_spread(cells[3], res[1].med, res[1].q1, res[1].q3);
		table_add(&t, (const char (*)[TABLE_CELL])cells);
	}
	table_print(&t);
	return 0;
}
