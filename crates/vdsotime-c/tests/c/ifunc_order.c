/*
 * Where each IFUNC-bound name landed (dladdr), and whether each still tells the kernel's
 * time: the program's own calls (bound after libvdsotime was relocated) and those of
 * ifunc_early.c's library (bound before). Prints one line per binding:
 *   <who> <name> <object it landed in> ok|BAD
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <vdsotime.h>

extern time_t (*early_time)(time_t *);
extern int (*early_gettimeofday)(struct timeval *, void *);

static const char *object_of(void *address)
{
	Dl_info info;
	if (!dladdr(address, &info) || !info.dli_fname)
		return "?";
	const char *slash = info.dli_fname;
	for (const char *p = info.dli_fname; *p; p++)
		if (*p == '/')
			slash = p + 1;
	return slash;
}

/* time() through `f`, bracketed by the coarse wall clock's seconds (the kernel's time). */
static int time_ok(time_t (*f)(time_t *))
{
	struct timespec before, after;
	syscall(SYS_clock_gettime, CLOCK_REALTIME_COARSE, &before);
	time_t stored = 0, got = f(&stored);
	syscall(SYS_clock_gettime, CLOCK_REALTIME_COARSE, &after);
	return got == stored && before.tv_sec <= got && got <= after.tv_sec;
}

static int gettimeofday_ok(int (*f)(struct timeval *, void *))
{
	struct timeval before, got, after;
	syscall(SYS_gettimeofday, &before, NULL);
	int r = f(&got, NULL);
	syscall(SYS_gettimeofday, &after, NULL);
	long long b = before.tv_sec * 1000000LL + before.tv_usec;
	long long g = got.tv_sec * 1000000LL + got.tv_usec;
	long long a = after.tv_sec * 1000000LL + after.tv_usec;
	return r == 0 && b <= g && g <= a;
}

int main(void)
{
	time_t (*own_time)(time_t *) = vdsotime_time;
	int (*own_gettimeofday)(struct timeval *, void *) = vdsotime_gettimeofday;
	printf("program vdsotime_time %s %s\n", object_of((void *)own_time),
	       time_ok(own_time) ? "ok" : "BAD");
	printf("program vdsotime_gettimeofday %s %s\n", object_of((void *)own_gettimeofday),
	       gettimeofday_ok(own_gettimeofday) ? "ok" : "BAD");
	printf("early vdsotime_time %s %s\n", object_of((void *)early_time),
	       time_ok(early_time) ? "ok" : "BAD");
	printf("early vdsotime_gettimeofday %s %s\n", object_of((void *)early_gettimeofday),
	       gettimeofday_ok(early_gettimeofday) ? "ok" : "BAD");
	return 0;
}
