/*
 * The first clock reading of a fresh C process: libvdsotime's against glibc's. libvdsotime
 * binds its functions when it is loaded, as glibc binds its own before main, so a program's
 * first vdsotime_clock_gettime should cost what its first clock_gettime costs. A third path
 * times vdsotime_init() in main: the binding work the library's constructor did at load.
 *
 * usage: first_call ROUNDS   runs ROUNDS rounds; each starts this program afresh once per
 *                            path, in an order rotated by one path a round, and prints
 *                            each path's fastest and median ns and the median [q1-q3] over
 *                            rounds of its ratio to glibc's in the same round
 *        first_call PATH     one such process: times PATH's first call between two raw
 *                            clock_gettime system calls (the least gap of a bare pair,
 *                            measured first, subtracted) and prints the ns and the page
 *                            faults the call took (getrusage)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <vdsotime.h>

static const char *const paths[] = { "glibc", "libvdsotime", "vdsotime_init" };
#define PATHS (int)(sizeof paths / sizeof paths[0])

/* CLOCK_MONOTONIC by the raw system call, in ns. */
static long long raw_now(void)
{
	struct timespec ts = { 0, 0 };
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Makes PATH's first call; 0 if it failed or PATH is unknown. */
static __attribute__((noinline)) int first(int path)
{
	struct timespec ts = { 0, 0 };
	switch (path) {
	case 0:
		return clock_gettime(CLOCK_MONOTONIC, &ts) == 0;
	case 1:
		return vdsotime_clock_gettime(CLOCK_MONOTONIC, &ts) == 0;
	case 2:
		vdsotime_init();
		return 1;
	}
	return 0;
}

/* Page faults (minor and major) this process has taken so far. */
static long faults(void)
{
	struct rusage u;
	if (getrusage(RUSAGE_SELF, &u) != 0)
		return 0;
	return u.ru_minflt + u.ru_majflt;
}

/* One fresh process: prints the ns of PATH's first call and the page faults it took. */
static int probe(int path)
{
	long long gap = -1;
	for (int i = 0; i < 5; i++) {
		long long a = raw_now(), b = raw_now();
		if (gap < 0 || b - a < gap)
			gap = b - a;
	}
	long f0 = faults();
	long long t0 = raw_now();
	int ok = first(path);
	long long t1 = raw_now();
	long f1 = faults();
	if (!ok)
		return 1;
	printf("%lld %ld\n", t1 - t0 - gap > 0 ? t1 - t0 - gap : 0, f1 - f0);
	return 0;
}

/* Runs `self PATH` and reads the ns and page faults it prints. */
static long long run(const char *self, int path, long *fault_count)
{
	int fds[2];
	if (pipe(fds) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execl(self, self, paths[path], (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	char buf[64] = { 0 };
	ssize_t n = read(fds[0], buf, sizeof buf - 1);
	close(fds[0]);
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0 || n <= 0)
		return -1;
	char *end = NULL;
	long long ns = strtoll(buf, &end, 10);
	*fault_count = strtol(end, NULL, 10);
	return ns;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The q-quantile (0..1) of n sorted values, nearest rank. */
static double quantile(const double *v, int n, double q)
{
	return v[(int)(q * (n - 1) + 0.5)];
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: first_call ROUNDS | first_call PATH\n");
		return 2;
	}
	for (int p = 0; p < PATHS; p++)
		if (strcmp(argv[1], paths[p]) == 0)
			return probe(p);
	int rounds = atoi(argv[1]);
	if (rounds <= 0) {
		fprintf(stderr, "first_call: ROUNDS must be a positive number or PATH one of glibc, "
				"libvdsotime, vdsotime_init\n");
		return 2;
	}
	double *ns = calloc((size_t)rounds * PATHS, sizeof *ns);
	double *ratio = calloc((size_t)rounds * PATHS, sizeof *ratio);
	double *pf = calloc((size_t)rounds * PATHS, sizeof *pf);
	if (ns == NULL || ratio == NULL || pf == NULL)
		return 1;
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < PATHS; k++) {
			int p = (r + k) % PATHS;
			long f = 0;
			long long v = run("/proc/self/exe", p, &f);
			if (v < 0) {
				fprintf(stderr, "first_call: the %s process failed\n", paths[p]);
				return 1;
			}
			ns[p * rounds + r] = (double)v;
			pf[p * rounds + r] = (double)f;
		}
		for (int p = 0; p < PATHS; p++)
			ratio[p * rounds + r] = ns[p * rounds + r] / (ns[r] > 0 ? ns[r] : 1);
	}
	printf("first call in a fresh process (%d rounds, each one process per path in rotated order; "
	       "ns between two raw clock_gettime system calls, their own gap subtracted)\n",
	       rounds);
	printf("| path | fastest ns | median ns | x/glibc median [q1-q3] | page faults (median) |\n"
	       "|---|---|---|---|---|\n");
	for (int p = 0; p < PATHS; p++) {
		double *v = ns + p * rounds, *x = ratio + p * rounds, *f = pf + p * rounds;
		qsort(v, (size_t)rounds, sizeof *v, by_value);
		qsort(x, (size_t)rounds, sizeof *x, by_value);
		qsort(f, (size_t)rounds, sizeof *f, by_value);
		printf("| %s | %.0f | %.0f | %.3f [%.3f-%.3f] | %.0f |\n", paths[p], v[0],
		       quantile(v, rounds, 0.5), quantile(x, rounds, 0.5), quantile(x, rounds, 0.25),
		       quantile(x, rounds, 0.75), quantile(f, rounds, 0.5));
	}
	free(ns);
	free(ratio);
	free(pf);
	return 0;
}
