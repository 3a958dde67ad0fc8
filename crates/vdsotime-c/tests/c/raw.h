/*
 * The kernel's own answers, for the C test programs to compare with: raw system calls
 * returning 0 or -errno, in the program's own struct layouts, and the errno-keeping CALL.
 * Included by one source file per program, after check.h.
 *
 * A 64-bit time_t on a 32-bit target (32-bit glibc built with _TIME_BITS=64, or 32-bit musl
 * 1.2+, whose headers then name the old calls SYS_*_time32 and define no SYS_clock_gettime)
 * has the kernel's time64 layouts, read by the *time64 calls; there is no time64
 * gettimeofday: its time comes from clock_gettime64, truncated as the kernel truncates.
 */
#ifndef VDSOTIME_TEST_RAW_H
#define VDSOTIME_TEST_RAW_H

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#if (defined(__USE_TIME_BITS64) && defined(__TIMESIZE) && __TIMESIZE == 32) || \
	(!defined(SYS_clock_gettime) && defined(SYS_clock_gettime64))
#define TIME64_ON_32 1
#define MODE_TIME " time64"
#else
#define MODE_TIME ""
#endif
#if !defined(SYS_gettimeofday) && defined(SYS_gettimeofday_time32)
#define SYS_gettimeofday SYS_gettimeofday_time32
#endif

#ifdef TIME64_ON_32
#define SYS_GETTIME SYS_clock_gettime64
#define SYS_GETRES SYS_clock_getres_time64
#else
#define SYS_GETTIME SYS_clock_gettime
#define SYS_GETRES SYS_clock_getres
#endif

static inline long sys_clock_gettime(clockid_t c, struct timespec *ts)
{
	return syscall(SYS_GETTIME, c, ts) == 0 ? 0 : -errno;
}

static inline long sys_clock_getres(clockid_t c, struct timespec *ts)
{
	return syscall(SYS_GETRES, c, ts) == 0 ? 0 : -errno;
}

static inline long sys_gettimeofday(struct timeval *tv, struct timezone *tz)
{
#ifdef TIME64_ON_32
	if (tv != NULL) {
		struct timespec ts;
		memset(tv, 0, sizeof *tv); /* defined even on failure, for gcc's flow analysis */
		if (sys_clock_gettime(CLOCK_REALTIME, &ts) != 0)
			return -errno;
		tv->tv_sec = ts.tv_sec;
		tv->tv_usec = ts.tv_nsec / 1000;
	}
	return syscall(SYS_gettimeofday, NULL, tz) == 0 ? 0 : -errno;
#else
	return syscall(SYS_gettimeofday, tv, tz) == 0 ? 0 : -errno;
#endif
}

static inline time_t sys_time(void)
{
#if defined(SYS_time) && !defined(TIME64_ON_32)
	return (time_t)syscall(SYS_time, NULL);
#else
	struct timespec ts;
	sys_clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	return ts.tv_sec;
#endif
}

static inline int ts_le(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec <= b->tv_nsec);
}

static inline int tv_le(const struct timeval *a, const struct timeval *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_usec <= b->tv_usec);
}

/* Calls the function under test, storing 0 or -errno in `result`, and checks that errno
 * is kept on success. */
#define CALL(expr, result)                                                       \
	do {                                                                     \
		errno = 4242;                                                    \
		int r_ = (expr);                                                 \
		int e_ = errno;                                                  \
		CHECK(r_ == 0 || r_ == -1, "%s returned %d", #expr, r_);         \
		if (r_ == 0)                                                     \
			CHECK(e_ == 4242, "%s changed errno to %d on success", #expr, e_); \
		(result) = r_ == 0 ? 0 : -e_;                                    \
	} while (0)

#endif
