/*
 * A library that uses vdsotime_time and vdsotime_gettimeofday without linking libvdsotime,
 * through pointers bound when it is relocated (GLOB_DAT). A program that links libvdsotime
 * before it makes the dynamic linker relocate this library first, so the IFUNC resolvers
 * run before libvdsotime's own relocations: they must then answer the plain wrappers.
 */
#include <stddef.h>
#include <sys/time.h>
#include <time.h>

time_t vdsotime_time(time_t *t);
int vdsotime_gettimeofday(struct timeval *tv, void *tz);

time_t (*early_time)(time_t *) = vdsotime_time;
int (*early_gettimeofday)(struct timeval *, void *) = vdsotime_gettimeofday;
