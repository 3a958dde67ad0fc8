/*
 * Compiled (never run) by tests/header.rs with -Werror: the hand-written header must agree with
 * the Rust side. The EXPECT_* macros are the sizes and offsets the Rust compiler reports for the
 * types behind each pointer (vdsotime::Timespec, vdsotime::Timeval, vdsotime::Timezone, and
 * vdsotime_c::ctypes's timespec/timeval/time_t, the C library's own), passed as -D flags.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <sys/random.h>
#include <vdsotime.h>

_Static_assert(sizeof(struct vdsotime_timespec64) == EXPECT_TIMESPEC64_SIZE, "timespec64 size");
_Static_assert(offsetof(struct vdsotime_timespec64, tv_sec) == EXPECT_TIMESPEC64_SEC, "timespec64 tv_sec");
_Static_assert(offsetof(struct vdsotime_timespec64, tv_nsec) == EXPECT_TIMESPEC64_NSEC, "timespec64 tv_nsec");
_Static_assert(sizeof(struct vdsotime_timeval64) == EXPECT_TIMEVAL64_SIZE, "timeval64 size");
_Static_assert(offsetof(struct vdsotime_timeval64, tv_sec) == EXPECT_TIMEVAL64_SEC, "timeval64 tv_sec");
_Static_assert(offsetof(struct vdsotime_timeval64, tv_usec) == EXPECT_TIMEVAL64_USEC, "timeval64 tv_usec");
_Static_assert(sizeof(struct timezone) == EXPECT_TIMEZONE_SIZE, "struct timezone size");
_Static_assert(offsetof(struct timezone, tz_dsttime) == EXPECT_TIMEZONE_DST, "struct timezone tz_dsttime");
_Static_assert(sizeof(struct timespec) == EXPECT_TIMESPEC_SIZE, "struct timespec size");
_Static_assert(offsetof(struct timespec, tv_nsec) == EXPECT_TIMESPEC_NSEC, "struct timespec tv_nsec");
_Static_assert(sizeof(struct timeval) == EXPECT_TIMEVAL_SIZE, "struct timeval size");
_Static_assert(offsetof(struct timeval, tv_usec) == EXPECT_TIMEVAL_USEC, "struct timeval tv_usec");
_Static_assert(sizeof(time_t) == EXPECT_TIME_T_SIZE, "time_t size");
_Static_assert(sizeof(clockid_t) == EXPECT_CLOCKID_T_SIZE, "clockid_t size");
_Static_assert(sizeof(ssize_t) == EXPECT_SSIZE_T_SIZE, "ssize_t size");
_Static_assert(VDSOTIME_GRND_NONBLOCK == GRND_NONBLOCK, "GRND_NONBLOCK");
_Static_assert(VDSOTIME_GRND_RANDOM == GRND_RANDOM, "GRND_RANDOM");
#ifdef GRND_INSECURE
_Static_assert(VDSOTIME_GRND_INSECURE == GRND_INSECURE, "GRND_INSECURE");
#endif

/* The declared types of every function: a mismatch is an error under -Werror. */
int (*const p_clock_gettime)(clockid_t, struct timespec *) = vdsotime_clock_gettime;
int (*const p_clock_getres)(clockid_t, struct timespec *) = vdsotime_clock_getres;
int (*const p_gettimeofday)(struct timeval *, void *) = vdsotime_gettimeofday;
time_t (*const p_time)(time_t *) = vdsotime_time;
int (*const p_getcpu)(unsigned int *, unsigned int *) = vdsotime_getcpu;
int (*const p_clock_gettime64)(clockid_t, struct vdsotime_timespec64 *) = vdsotime_clock_gettime64;
int (*const p_clock_getres64)(clockid_t, struct vdsotime_timespec64 *) = vdsotime_clock_getres64;
int (*const p_gettimeofday64)(struct vdsotime_timeval64 *, void *) = vdsotime_gettimeofday64;
int64_t (*const p_time64)(int64_t *) = vdsotime_time64;
ssize_t (*const p_getrandom)(void *, size_t, unsigned int) = vdsotime_getrandom;
int (*const p_getentropy)(void *, size_t) = vdsotime_getentropy;
void (*const p_init)(void) = vdsotime_init;
