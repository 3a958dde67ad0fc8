/*
 * Other code reads the time before libvdsotime's constructor runs (tests/sandbox.rs): a
 * constructor of this program with a high priority, which runs before the library's, starts
 * threads that read every clock function while the library's constructor binds them, and
 * reads the time itself. main joins the threads, enters the sandbox of allowlist.h, and
 * reads again: each function must be bound, once and for all, whatever order the binding
 * happened in. Prints "SANDBOX_OK" if every call succeeded.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <vdsotime.h>

#include "allowlist.h"

#define THREADS 4
#define ROUNDS 2000

static pthread_t threads[THREADS];
static int started;
static _Atomic int failures;

static int read_all(void)
{
	struct timespec ts = { 0, 0 }, res = { 0, 0 };
	struct timeval tv = { 0, 0 };
	int ok = vdsotime_clock_gettime(CLOCK_MONOTONIC, &ts) == 0 && ts.tv_sec >= 0 &&
		 vdsotime_clock_getres(CLOCK_REALTIME, &res) == 0 &&
		 vdsotime_gettimeofday(&tv, NULL) == 0 && tv.tv_sec > 0 && vdsotime_time(NULL) > 0;
#ifndef NO_GETCPU /* defined where getcpu is a system call */
	unsigned cpu = 9999;
	ok = ok && vdsotime_getcpu(&cpu, NULL) == 0 && cpu != 9999;
#endif
	return ok;
}

static void *reader(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++)
		if (!read_all())
			failures++;
	return NULL;
}

/* Priority 101 runs before every constructor without a priority, the library's among them
 * when it is linked in from the archive; a shared library's runs before the program's
 * anyway, so there only the threads race. */
__attribute__((constructor(101))) static void early(void)
{
	if (!read_all())
		failures++;
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&threads[i], NULL, reader, NULL) == 0)
			started++;
}

int main(void)
{
	for (int i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	if (started != THREADS || failures != 0) {
		printf("%d threads started, %d failed reads before the sandbox\n", started, failures);
		return 1;
	}
	kill_allowlist();
	static const char ok[] = "SANDBOX_OK\n", failed[] = "a read failed in the sandbox\n";
	int r = read_all();
	ssize_t w = r ? write(1, ok, strlen(ok)) : write(1, failed, strlen(failed));
	(void)w;
	_exit(r ? 0 : 1);
}
