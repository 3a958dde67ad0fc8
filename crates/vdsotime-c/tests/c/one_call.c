/*
 * A program that uses one libvdsotime function, chosen when it is built (-DCALL_clock_gettime,
 * -DCALL_time, ...: tests/sandbox.rs), and never calls vdsotime_init(): it enters the
 * sandbox of allowlist.h first thing in main, then calls that function. It survives only if
 * the library bound its functions when it was loaded: linked from the static archive, only
 * if the constructor came in with that one function. Prints "SANDBOX_OK" if the call
 * succeeded.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <vdsotime.h>

#include "allowlist.h"

static int call(void)
{
#if defined(CALL_clock_gettime)
	struct timespec ts = { 0, 0 };
	return vdsotime_clock_gettime(CLOCK_MONOTONIC, &ts) == 0 && (ts.tv_sec | ts.tv_nsec) != 0;
#elif defined(CALL_clock_getres)
	struct timespec ts = { 0, 0 };
	return vdsotime_clock_getres(CLOCK_MONOTONIC, &ts) == 0 && ts.tv_nsec > 0;
#elif defined(CALL_gettimeofday)
	struct timeval tv = { 0, 0 };
	return vdsotime_gettimeofday(&tv, NULL) == 0 && tv.tv_sec > 0;
#elif defined(CALL_time)
	return vdsotime_time(NULL) > 0;
#elif defined(CALL_getcpu)
	unsigned cpu = 9999;
	return vdsotime_getcpu(&cpu, NULL) == 0 && cpu != 9999;
#elif defined(CALL_sched_getcpu)
	return vdsotime_sched_getcpu() >= 0;
#elif defined(CALL_clock_gettime64)
	struct vdsotime_timespec64 ts = { 0, 0 };
	return vdsotime_clock_gettime64(CLOCK_MONOTONIC, &ts) == 0 && (ts.tv_sec | ts.tv_nsec) != 0;
#elif defined(CALL_clock_getres64)
	struct vdsotime_timespec64 ts = { 0, 0 };
	return vdsotime_clock_getres64(CLOCK_MONOTONIC, &ts) == 0 && ts.tv_nsec > 0;
#elif defined(CALL_gettimeofday64)
	struct vdsotime_timeval64 tv = { 0, 0 };
	return vdsotime_gettimeofday64(&tv, NULL) == 0 && tv.tv_sec > 0;
#elif defined(CALL_time64)
	return vdsotime_time64(NULL) > 0;
#else
#error "define CALL_<function>"
#endif
}

int main(void)
{
	kill_allowlist();
	static const char ok[] = "SANDBOX_OK\n", failed[] = "the call failed\n";
	int r = call();
	ssize_t w = r ? write(1, ok, strlen(ok)) : write(1, failed, strlen(failed));
	(void)w;
	_exit(r ? 0 : 1);
}
