/*
 * vdsotime.h: read the clocks, and get random bytes, through the Linux vDSO, with the C
 * library's semantics.
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
 * Link with the shared library, libvdsotime.so:
 *     cc prog.c $(pkg-config --cflags --libs vdsotime)
 * or with the static archive, libvdsotime.a, in a dynamic or a fully static program:
 *     cc prog.c $(pkg-config --cflags --libs vdsotime-static)
 *     cc -static prog.c $(pkg-config --cflags --static --libs vdsotime-static)
 * See libvdsotime(3).
 *
 * Strict ISO C: struct timespec and the CLOCK_* ids are POSIX names, which <time.h> hides
 * under -std=c99 and -std=c11 unless the program asks for POSIX. This header works in those
 * modes: it declares struct timespec and struct timeval itself (as incomplete types, for
 * its prototypes) and defines each CLOCK_* id that <time.h> did not, with the Linux
 * kernel's value (the same token as the C library's, so a later definition agrees). ISO C11
 * defines struct timespec, so a C11 program can declare one; ISO C99 has none, and a C99
 * program that declares a struct timespec must ask for POSIX: #define _POSIX_C_SOURCE
 * 200809L before its first #include (as examples/c/quickstart.c does), or compile with
 * -D_POSIX_C_SOURCE=200809L. The GNU modes (-std=gnu99, gnu11, gnu17, the default) and
 * C++ need nothing.
 */
#ifndef VDSOTIME_H
#define VDSOTIME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Declared for the prototypes below in modes where <time.h> hides them (see above). */
struct timespec;
struct timeval;

/* Linux's clock ids (uapi linux/time.h), where strict ISO C hid the C library's. */
#ifndef CLOCK_REALTIME
#define CLOCK_REALTIME 0
#endif
#ifndef CLOCK_MONOTONIC
#define CLOCK_MONOTONIC 1
#endif
#ifndef CLOCK_PROCESS_CPUTIME_ID
#define CLOCK_PROCESS_CPUTIME_ID 2
#endif
#ifndef CLOCK_THREAD_CPUTIME_ID
#define CLOCK_THREAD_CPUTIME_ID 3
#endif
#ifndef CLOCK_MONOTONIC_RAW
#define CLOCK_MONOTONIC_RAW 4
#endif
#ifndef CLOCK_REALTIME_COARSE
#define CLOCK_REALTIME_COARSE 5
#endif
#ifndef CLOCK_MONOTONIC_COARSE
#define CLOCK_MONOTONIC_COARSE 6
#endif
#ifndef CLOCK_BOOTTIME
#define CLOCK_BOOTTIME 7
#endif
#ifndef CLOCK_REALTIME_ALARM
#define CLOCK_REALTIME_ALARM 8
#endif
#ifndef CLOCK_BOOTTIME_ALARM
#define CLOCK_BOOTTIME_ALARM 9
#endif
#ifndef CLOCK_TAI
#define CLOCK_TAI 11
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

/*
 * The library binds the vDSO when it is loaded, as the C library does: a constructor finds
 * and checks it (one system call that confirms it is mapped) and binds every function, so
 * a program that enters a seccomp sandbox keeps its clocks without calling this: the
 * clocks the vDSO serves, gettimeofday, time and getcpu (where the vDSO or glibc's rseq
 * area answers it) make no system call of their own. A libvdsotime that dlopen brings in
 * binds at that dlopen: open it before the filter goes in. vdsotime_init() does the
 * binding again, at once; optional, and safe to call again.
 */
void vdsotime_init(void);

/* Current CPU and NUMA node; either pointer may be NULL. */
int vdsotime_getcpu(unsigned int *cpu, unsigned int *node);
/* Current CPU (sched_getcpu), or -1 with errno. From glibc's rseq area where there is one. */
int vdsotime_sched_getcpu(void);

/*
 * Random bytes with the kernel's getrandom(2) semantics, from the vDSO (Linux 6.11+ on
 * x86_64; 6.12+ on arm64, powerpc64, s390x, loongarch64) where the kernel exports it,
 * else the system call. A thread's first 4 draws make the system call unless a state
 * is free in the pool or the draw is longer than 256 bytes, which the system call could
 * cut short on a signal (a short-lived thread or process costs no more than that); its
 * next takes a state (144 bytes of MAP_DROPPABLE memory), which goes back to the pool
 * when the thread exits.
 *
 * vdsotime_getrandom returns the number of bytes written (all of them up to INT_MAX
 * rounded down to a page, as the kernel), or -1 with errno: EINVAL for an unknown flag or
 * GRND_INSECURE|GRND_RANDOM, EAGAIN for GRND_NONBLOCK before the kernel's generator is
 * ready, EFAULT for a NULL buf with buflen > 0. vdsotime_getentropy fills all of buf
 * (len <= 256, else EIO), as glibc's getentropy. Other invalid pointers crash
 * (SIGSEGV), as with any vDSO call. Not a cancellation point.
 */
#define VDSOTIME_GRND_NONBLOCK 0x0001
#define VDSOTIME_GRND_RANDOM 0x0002
#define VDSOTIME_GRND_INSECURE 0x0004
ssize_t vdsotime_getrandom(void *buf, size_t buflen, unsigned int flags);
int vdsotime_getentropy(void *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* VDSOTIME_H */
