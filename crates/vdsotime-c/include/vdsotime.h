/*
 * vdsotime.h: read the clocks through the Linux vDSO, with the C library's semantics.
 *
 * Every function behaves like its libc namesake: it returns 0 (time: the seconds), or -1 with
 * errno set to the kernel's error (EINVAL for an unknown clock, EOVERFLOW when a 32-bit time_t
 * cannot hold the result). It never aborts. The vDSO serves the call when it can; otherwise the
 * exact system call does, so results and errors are the kernel's.
 *
 * Pointers: NULL is checked. clock_gettime with ts == NULL fails with EFAULT, like the system
 * call (after EINVAL for an unknown clock, in the kernel's order); the other pointers may be
 * NULL where noted, and are then not written. Any other invalid pointer is written through
 * from user space and crashes the program (SIGSEGV), exactly as glibc's vDSO path does; only the
 * kernel can turn a bad pointer into EFAULT. On error the output is left untouched.
 *
 * Link with `pkg-config --libs vdsotime` (libvdsotime.so) or
 * `pkg-config --static --libs vdsotime` (libvdsotime.a).
 */
#ifndef VDSOTIME_H
#define VDSOTIME_H

#include <stdint.h>
#include <sys/time.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel's struct __kernel_timespec: 64-bit seconds on every target. */
struct vdsotime_timespec64 {
	int64_t tv_sec;
	int64_t tv_nsec;
};

/* 64-bit seconds and microseconds on every target. */
struct vdsotime_timeval64 {
	int64_t tv_sec;
	int64_t tv_usec;
};

/* 64-bit-time variants, available on every target. */
int vdsotime_clock_gettime64(clockid_t clock, struct vdsotime_timespec64 *ts);
int vdsotime_clock_getres64(clockid_t clock, struct vdsotime_timespec64 *res); /* res may be NULL */
int vdsotime_gettimeofday64(struct vdsotime_timeval64 *tv, void *tz); /* either may be NULL */
int64_t vdsotime_time64(int64_t *t); /* t may be NULL */

#if defined(__USE_TIME_BITS64) && defined(__TIMESIZE) && __TIMESIZE == 32
/*
 * 32-bit glibc with _TIME_BITS=64: struct timespec and struct timeval have 64-bit fields laid
 * out like the kernel's, so the plain names are the 64-bit entry points.
 */
int vdsotime_clock_gettime(clockid_t clock, struct timespec *ts) __asm__("vdsotime_clock_gettime64");
int vdsotime_clock_getres(clockid_t clock, struct timespec *res) __asm__("vdsotime_clock_getres64");
int vdsotime_gettimeofday(struct timeval *tv, void *tz) __asm__("vdsotime_gettimeofday64");
time_t vdsotime_time(time_t *t) __asm__("vdsotime_time64");
#else
/* The C library's time_t: 32-bit on 32-bit targets (EOVERFLOW after 2038), 64-bit elsewhere. */
int vdsotime_clock_gettime(clockid_t clock, struct timespec *ts);
int vdsotime_clock_getres(clockid_t clock, struct timespec *res); /* res may be NULL */
int vdsotime_gettimeofday(struct timeval *tv, void *tz); /* either may be NULL; tz is a struct timezone, filled as the kernel does */
time_t vdsotime_time(time_t *t); /* t may be NULL */
#endif

/* Current CPU and NUMA node; either pointer may be NULL. */
int vdsotime_getcpu(unsigned int *cpu, unsigned int *node);

#ifdef __cplusplus
}
#endif

#endif /* VDSOTIME_H */
