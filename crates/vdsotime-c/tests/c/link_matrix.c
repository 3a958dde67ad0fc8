/*
 * One program of the C link matrix (tests/link_matrix.rs): every function of libvdsotime
 * against the raw system call, on the main thread and then on four threads at once;
 * errno kept on every success and the kernel's errno on every failure; whether the process
 * has a vDSO, as the run promises. Small on purpose: valgrind runs it too.
 *
 * usage: link_matrix vdso|no-vdso [LIBRARY [plugin vdso-getrandom|no-vdso-getrandom]]
 *
 * Built per link mode:
 *   (plain)        linked against libvdsotime: shared, the archive, -static, -static-pie.
 *                  errno must still be 0 when main starts (IFUNC resolvers ran by then).
 *   -DVIA_DLOPEN   not linked: three rounds of dlopen(LIBRARY) (libvdsotime.so.0, or a
 *                  plugin built from the archive: tests/c/plugin.c), the checks, dlclose, with
 *                  two threads per round that take a getrandom state (a thread-exit
 *                  destructor) and exit only after the dlclose. With `plugin`: the
 *                  library must be gone from /proc/self/maps after each dlclose (with
 *                  glibc: musl's dlclose unmaps nothing), and
 *                  where the vDSO has getrandom (`vdso-getrandom`) each thread proves it
 *                  holds a state: under a seccomp filter of its own that fails the
 *                  getrandom system call, its getrandom still succeeds.
 *   -DLIBC_NAMES   the libc names, run under LD_PRELOAD of the preload library: each must
 *                  be bound to it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <unistd.h>

#include <vdsotime.h>

#include "check.h"
#include "raw.h"

#if defined(LIBC_NAMES) && !defined(__GLIBC__)
/* musl has getcpu only since 1.2.4: a weak reference, which the preload's definition binds. */
int getcpu(unsigned int *cpu, unsigned int *node) __attribute__((weak));
#endif

/* The functions under test; the *64 ones are NULL for the libc names. */
struct api {
	int (*clock_gettime)(clockid_t, struct timespec *);
	int (*clock_getres)(clockid_t, struct timespec *);
	int (*gettimeofday)(struct timeval *, void *);
	time_t (*time)(time_t *);
	int (*clock_gettime64)(clockid_t, struct vdsotime_timespec64 *);
	int (*clock_getres64)(clockid_t, struct vdsotime_timespec64 *);
	int (*gettimeofday64)(struct vdsotime_timeval64 *, void *);
	int64_t (*time64)(int64_t *);
	int (*getcpu)(unsigned int *, unsigned int *);
	int (*sched_getcpu)(void);
	ssize_t (*getrandom)(void *, size_t, unsigned int);
	int (*getentropy)(void *, size_t);
};

static struct api api;

/* Hidden from the optimiser, so that glibc's nonnull attributes cannot drop the NULL. */
static void *volatile null_ptr;

static const clockid_t clocks[] = {
	CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID,
	CLOCK_MONOTONIC_RAW, CLOCK_REALTIME_COARSE, CLOCK_MONOTONIC_COARSE, CLOCK_BOOTTIME,
	CLOCK_TAI,
};
#define NCLOCKS (sizeof clocks / sizeof clocks[0])
#define SENTINEL 0x5a
#define BAD_CLOCK ((clockid_t)-1)

static void clock_gettime_brackets(clockid_t c)
{
	struct timespec before, got, after;
	long r;
	sys_clock_gettime(c, &before);
	CALL(api.clock_gettime(c, &got), r);
	sys_clock_gettime(c, &after);
	CHECK(r == 0 && ts_le(&before, &got) && ts_le(&got, &after),
	      "clock_gettime(%d): %ld, %lld.%09ld not within [%lld.%09ld, %lld.%09ld]", c, r,
	      (long long)got.tv_sec, (long)got.tv_nsec, (long long)before.tv_sec,
	      (long)before.tv_nsec, (long long)after.tv_sec, (long)after.tv_nsec);
	if (api.clock_gettime64) {
		struct vdsotime_timespec64 got64;
		sys_clock_gettime(c, &before);
		CALL(api.clock_gettime64(c, &got64), r);
		sys_clock_gettime(c, &after);
		struct timespec g = { .tv_sec = (time_t)got64.tv_sec, .tv_nsec = (long)got64.tv_nsec };
		CHECK(r == 0 && ts_le(&before, &g) && ts_le(&g, &after),
		      "clock_gettime64(%d): %ld, out of bracket", c, r);
	}
}

static void clock_getres_exact(clockid_t c)
{
	struct timespec want, got;
	long r;
	memset(&got, SENTINEL, sizeof got);
	long rw = sys_clock_getres(c, &want);
	CALL(api.clock_getres(c, &got), r);
	CHECK(r == rw && (r != 0 || (got.tv_sec == want.tv_sec && got.tv_nsec == want.tv_nsec)),
	      "clock_getres(%d): %ld vs the syscall's %ld", c, r, rw);
	if (api.clock_getres64) {
		struct vdsotime_timespec64 got64;
		CALL(api.clock_getres64(c, &got64), r);
		CHECK(r == rw && (r != 0 || (got64.tv_sec == want.tv_sec && got64.tv_nsec == want.tv_nsec)),
		      "clock_getres64(%d): %ld vs the syscall's %ld", c, r, rw);
	}
}

/* Failures: the kernel's errno, the output untouched. */
static void clock_failures(void)
{
	struct timespec ts, untouched;
	long r;
	memset(&ts, SENTINEL, sizeof ts);
	memset(&untouched, SENTINEL, sizeof untouched);
	long want = sys_clock_gettime(BAD_CLOCK, &ts);
	CALL(api.clock_gettime(BAD_CLOCK, &ts), r);
	CHECK(r == want && want == -EINVAL && memcmp(&ts, &untouched, sizeof ts) == 0,
	      "clock_gettime(-1): %ld, syscall %ld", r, want);
	CALL(api.clock_getres(BAD_CLOCK, &ts), r);
	CHECK(r == -EINVAL && r == sys_clock_getres(BAD_CLOCK, &ts), "clock_getres(-1): %ld", r);
	CALL(api.clock_getres(CLOCK_MONOTONIC, null_ptr), r);
	CHECK(r == 0, "clock_getres(MONOTONIC, NULL): %ld", r);
	if (api.clock_gettime64) {
		struct vdsotime_timespec64 t64;
		CALL(api.clock_gettime64(BAD_CLOCK, &t64), r);
		CHECK(r == -EINVAL, "clock_gettime64(-1): %ld", r);
		CALL(api.clock_getres64(BAD_CLOCK, &t64), r);
		CHECK(r == -EINVAL, "clock_getres64(-1): %ld", r);
	}
}

static void gettimeofday_and_time(void)
{
	struct timeval before, got, after;
	struct timezone tz_sys, tz_got;
	long r;
	memset(&tz_got, SENTINEL, sizeof tz_got);
	sys_gettimeofday(&before, &tz_sys);
	CALL(api.gettimeofday(&got, &tz_got), r);
	sys_gettimeofday(&after, NULL);
	CHECK(r == 0 && tv_le(&before, &got) && tv_le(&got, &after) &&
		      memcmp(&tz_got, &tz_sys, sizeof tz_got) == 0,
	      "gettimeofday: %ld, %lld.%06ld not within [%lld.%06ld, %lld.%06ld]", r,
	      (long long)got.tv_sec, (long)got.tv_usec, (long long)before.tv_sec,
	      (long)before.tv_usec, (long long)after.tv_sec, (long)after.tv_usec);
	CALL(api.gettimeofday(null_ptr, null_ptr), r);
	CHECK(r == 0, "gettimeofday(NULL, NULL): %ld", r);
	if (api.gettimeofday64) {
		struct vdsotime_timeval64 got64;
		sys_gettimeofday(&before, NULL);
		CALL(api.gettimeofday64(&got64, null_ptr), r);
		sys_gettimeofday(&after, NULL);
		struct timeval g = { .tv_sec = (time_t)got64.tv_sec, .tv_usec = (suseconds_t)got64.tv_usec };
		CHECK(r == 0 && tv_le(&before, &g) && tv_le(&g, &after), "gettimeofday64: %ld", r);
	}

	errno = 4242;
	time_t t_before = sys_time(), stored = -7;
	time_t t = api.time(&stored);
	time_t t_after = sys_time();
	CHECK(errno == 4242 && t == stored && t_before <= t && t <= t_after,
	      "time: %lld (stored %lld) not within [%lld, %lld], errno %d", (long long)t,
	      (long long)stored, (long long)t_before, (long long)t_after, errno);
	if (api.time64) {
		int64_t stored64 = -7, t64 = api.time64(&stored64);
		t_after = sys_time();
		CHECK(errno == 4242 && t64 == stored64 && t <= t64 && t64 <= t_after, "time64: %lld",
		      (long long)t64);
	}
}

/* Pinned to one CPU of the thread's mask (the `index`th, wrapping), against the syscall. */
static void cpu_pinned(unsigned index)
{
	cpu_set_t saved, one;
	CHECK(sched_getaffinity(0, sizeof saved, &saved) == 0, "sched_getaffinity");
	int count = CPU_COUNT(&saved), cpu = -1;
	for (int i = 0, seen = 0; i < CPU_SETSIZE && count > 0; i++)
		if (CPU_ISSET(i, &saved) && seen++ == (int)(index % (unsigned)count))
			cpu = i;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	CHECK(cpu >= 0 && sched_setaffinity(0, sizeof one, &one) == 0, "pin to cpu %d", cpu);
	unsigned got_cpu = 9999, got_node = 9999, sys_cpu = 0, sys_node = 0;
	long r;
	CALL(api.getcpu(&got_cpu, &got_node), r);
	CHECK(syscall(SYS_getcpu, &sys_cpu, &sys_node, NULL) == 0, "syscall getcpu");
	CHECK(r == 0 && got_cpu == (unsigned)cpu && sys_cpu == (unsigned)cpu && got_node == sys_node,
	      "pinned to %d: getcpu %ld says %u node %u, syscall %u node %u", cpu, r, got_cpu,
	      got_node, sys_cpu, sys_node);
	CALL(api.getcpu(null_ptr, null_ptr), r);
	CHECK(r == 0, "getcpu(NULL, NULL): %ld", r);
	errno = 4242;
	int s = api.sched_getcpu();
	CHECK(s == cpu && errno == 4242, "sched_getcpu %d pinned to %d, errno %d", s, cpu, errno);
	CHECK(sched_setaffinity(0, sizeof saved, &saved) == 0, "restore the affinity");
}

static long sys_getrandom(void *buf, size_t len, unsigned flags)
{
	long r = syscall(SYS_getrandom, buf, len, flags);
	return r < 0 ? -errno : r;
}

/* The count or -errno of getrandom, checking that errno is kept on success. */
static long getrandom_call(void *buf, size_t len, unsigned flags)
{
	errno = 4242;
	ssize_t r = api.getrandom(buf, len, flags);
	CHECK(r >= -1 && (r == -1 || errno == 4242), "getrandom(%zu, %#x): %zd, errno %d", len, flags,
	      r, errno);
	return r == -1 ? -errno : r;
}

static void random_bytes(void)
{
	unsigned char buf[257], zero[64] = { 0 };
	const unsigned flag_sets[] = {
		0, VDSOTIME_GRND_NONBLOCK, VDSOTIME_GRND_INSECURE, 0x40,
		VDSOTIME_GRND_INSECURE | VDSOTIME_GRND_RANDOM,
	};
	for (size_t i = 0; i < sizeof flag_sets / sizeof flag_sets[0]; i++) {
		unsigned f = flag_sets[i];
		long want = sys_getrandom(buf, 64, f), got = getrandom_call(buf, 64, f);
		CHECK(got == want, "getrandom(64, %#x): %ld, syscall %ld", f, got, want);
		if (got == 64)
			CHECK(memcmp(buf, zero, sizeof zero) != 0, "getrandom(64, %#x): all zero", f);
	}
	CHECK(getrandom_call(buf, 0, 0) == 0, "getrandom(0 bytes)");

	long r;
	CALL(api.getentropy(buf, 256), r);
	CHECK(r == 0, "getentropy(256): %ld", r);
	CALL(api.getentropy(buf, 257), r);
	CHECK(r == -EIO, "getentropy(257): %ld", r);
}

/* NULL where the functions define EFAULT, as the kernel answers it. These calls (and the
 * raw system calls they are compared with) hand NULL to the kernel on purpose, which
 * memcheck reports: link_matrix.supp names this function. */
__attribute__((noinline)) static void null_pointers(void)
{
	long r;
	CALL(api.clock_gettime(CLOCK_MONOTONIC, null_ptr), r);
	CHECK(r == -EFAULT && r == sys_clock_gettime(CLOCK_MONOTONIC, null_ptr),
	      "clock_gettime(MONOTONIC, NULL): %ld", r);
	CALL(api.clock_gettime(BAD_CLOCK, null_ptr), r);
	CHECK(r == -EINVAL, "clock_gettime(-1, NULL): %ld (the clock is checked first)", r);
	if (api.clock_gettime64) {
		CALL(api.clock_gettime64(CLOCK_MONOTONIC, null_ptr), r);
		CHECK(r == -EFAULT, "clock_gettime64(MONOTONIC, NULL): %ld", r);
	}
	long got = getrandom_call(null_ptr, 16, 0);
	CHECK(got == -EFAULT && got == sys_getrandom(null_ptr, 16, 0), "getrandom(NULL, 16): %ld", got);
	CALL(api.getentropy(null_ptr, 16), r);
	CHECK(r == -EFAULT, "getentropy(NULL, 16): %ld", r);
}

static void check_everything(unsigned index)
{
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < NCLOCKS; i++) {
			clock_gettime_brackets(clocks[i]);
			clock_getres_exact(clocks[i]);
		}
		clock_failures();
		gettimeofday_and_time();
		cpu_pinned(index + (unsigned)round);
		random_bytes();
		null_pointers();
	}
}

/* Set by `plugin vdso-getrandom`: each dlopen thread must hold a getrandom state. */
static int require_state;

/* The errno the filter answers the getrandom system call with (EHWPOISON: nothing else
 * returns it from getrandom). */
#define FILTER_ERRNO 133

/* The kernel's BPF and seccomp ABI, spelt out: musl-gcc sees no linux/ headers. */
struct bpf_insn {
	unsigned short code;
	unsigned char jt, jf;
	unsigned int k;
};
struct bpf_program {
	unsigned short len;
	struct bpf_insn *insns;
};
#define LD_W_ABS 0x20 /* BPF_LD | BPF_W | BPF_ABS */
#define JEQ_K 0x15    /* BPF_JMP | BPF_JEQ | BPF_K */
#define RET_K 0x06    /* BPF_RET | BPF_K */
#define RET_ERRNO 0x00050000u
#define RET_ALLOW 0x7fff0000u
#define MODE_FILTER 2 /* SECCOMP_MODE_FILTER */

/* This thread holds a getrandom state: with the getrandom system call failing for this
 * thread only (a filter without TSYNC), its getrandom still succeeds, through the vDSO. */
static void holds_a_state(void)
{
	struct bpf_insn insns[] = {
		{ LD_W_ABS, 0, 0, 0 }, /* seccomp_data.nr */
		{ JEQ_K, 0, 1, SYS_getrandom },
		{ RET_K, 0, 0, RET_ERRNO | FILTER_ERRNO },
		{ RET_K, 0, 0, RET_ALLOW },
	};
	struct bpf_program prog = { sizeof insns / sizeof insns[0], insns };
	CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
		      prctl(PR_SET_SECCOMP, MODE_FILTER, &prog) == 0,
	      "install the thread's seccomp filter: %s", strerror(errno));
	unsigned char buf[16];
	errno = 0;
	ssize_t r = api.getrandom(buf, sizeof buf, 0);
	CHECK(r == (ssize_t)sizeof buf, "getrandom with its system call failing: %zd, errno %d "
	      "(no state taken)", r, errno);
}

/* A thread: the checks, then (dlopen rounds) a meeting with the main thread, which closes
 * the library, and a wait until it has. */
struct worker {
	pthread_t thread;
	unsigned index;
	pthread_barrier_t *checked; /* NULL, or where to meet once the checks are done */
	int release_fd;             /* a pipe to read one byte from before exiting */
};

static void *work(void *arg)
{
	struct worker *w = arg;
	check_everything(w->index);
	if (w->checked != NULL && require_state)
		holds_a_state();
	if (w->checked != NULL) {
		pthread_barrier_wait(w->checked);
		char byte;
		CHECK(read(w->release_fd, &byte, 1) == 1, "wait for the dlclose");
	}
	return NULL;
}

static void start(struct worker *w, unsigned index, pthread_barrier_t *checked, int release_fd)
{
	w->index = index;
	w->checked = checked;
	w->release_fd = release_fd;
	int e = pthread_create(&w->thread, NULL, work, w);
	CHECK(e == 0, "pthread_create: %s", strerror(e));
}

static void join(struct worker *w)
{
	CHECK(pthread_join(w->thread, NULL) == 0, "pthread_join");
}

#define THREADS 4

#ifdef VIA_DLOPEN
static void *symbol(void *lib, const char *name)
{
	void *f = dlsym(lib, name);
	CHECK(f != NULL, "dlsym(%s): %s", name, dlerror());
	return f;
}

/* Whether dlclose unmaps a library nothing else holds: glibc's does; musl's never does. */
#ifdef __GLIBC__
#define DLCLOSE_UNMAPS 1
#else
#define DLCLOSE_UNMAPS 0
#endif

/* Whether /proc/self/maps maps a file whose name ends in `name`. */
static int mapped(const char *name)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	CHECK(maps != NULL, "open /proc/self/maps");
	if (maps == NULL)
		return 0;
	char line[4096];
	int found = 0;
	size_t n = strlen(name);
	while (fgets(line, sizeof line, maps) != NULL) {
		size_t len = strcspn(line, "\n");
		line[len] = 0;
		found |= len >= n && strcmp(line + len - n, name) == 0;
	}
	fclose(maps);
	return found;
}

/* dlopen, the checks on the main thread and on threads that outlive the dlclose; again.
 * `unloads`: the dlclose must take the library out of the process. */
static void rounds(const char *path, int unloads)
{
	const char *base = strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path;
	for (int round = 0; round < 3; round++) {
		void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		CHECK(lib != NULL, "dlopen(%s): %s", path, dlerror());
		if (lib == NULL)
			return;
#define BIND(name)                                                  \
	do {                                                        \
		void *f_ = symbol(lib, "vdsotime_" #name);          \
		memcpy(&api.name, &f_, sizeof f_);                  \
	} while (0)
		BIND(clock_gettime); BIND(clock_getres); BIND(gettimeofday); BIND(time);
		BIND(clock_gettime64); BIND(clock_getres64); BIND(gettimeofday64); BIND(time64);
		BIND(getcpu); BIND(sched_getcpu); BIND(getrandom); BIND(getentropy);
#undef BIND
		check_everything(0);
		CHECK(!unloads || mapped(base), "%s is not in /proc/self/maps while loaded", base);
		int fds[2];
		CHECK(pipe(fds) == 0, "pipe");
		pthread_barrier_t checked;
		pthread_barrier_init(&checked, NULL, 3);
		struct worker workers[2];
		for (unsigned i = 0; i < 2; i++)
			start(&workers[i], i + 1, &checked, fds[0]);
		/* Once the threads are done with the library (each has taken a getrandom
		 * state, so a destructor for its exit), close it; they exit afterwards. */
		pthread_barrier_wait(&checked);
		CHECK(dlclose(lib) == 0, "dlclose: %s", dlerror());
		CHECK(!unloads || !mapped(base), "%s still mapped after its dlclose", base);
		memset(&api, 0, sizeof api);
		CHECK(write(fds[1], "xx", 2) == 2, "release the threads");
		for (unsigned i = 0; i < 2; i++)
			join(&workers[i]);
		pthread_barrier_destroy(&checked);
		close(fds[0]);
		close(fds[1]);
	}
}
#else
static void bind_linked(void)
{
#ifdef LIBC_NAMES
	api.clock_gettime = clock_gettime;
	api.clock_getres = clock_getres;
	api.gettimeofday = (int (*)(struct timeval *, void *))gettimeofday;
	api.time = time;
	api.getcpu = getcpu;
	api.sched_getcpu = sched_getcpu;
	api.getrandom = getrandom;
	api.getentropy = getentropy;
#else
	api = (struct api){
		vdsotime_clock_gettime, vdsotime_clock_getres, vdsotime_gettimeofday, vdsotime_time,
		vdsotime_clock_gettime64, vdsotime_clock_getres64, vdsotime_gettimeofday64,
		vdsotime_time64, vdsotime_getcpu, vdsotime_sched_getcpu, vdsotime_getrandom,
		vdsotime_getentropy,
	};
#endif
}
#endif

#ifdef LIBC_NAMES
/* Each libc name must resolve into the preload library. */
static void check_bound_to_preload(void)
{
	void *fns[] = { (void *)api.clock_gettime, (void *)api.clock_getres, (void *)api.gettimeofday,
			(void *)api.time, (void *)api.getcpu, (void *)api.sched_getcpu,
			(void *)api.getrandom, (void *)api.getentropy };
	for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
		Dl_info info;
		int ok = fns[i] != NULL && dladdr(fns[i], &info) != 0 && info.dli_fname != NULL;
		CHECK(ok && strstr(info.dli_fname, "libvdsotime_preload") != NULL,
		      "function %zu is bound to %s", i, ok ? info.dli_fname : "(unknown)");
	}
}
#endif

int main(int argc, char **argv)
{
	int errno_at_main = errno;
	if (argc < 2 || (strcmp(argv[1], "vdso") != 0 && strcmp(argv[1], "no-vdso") != 0)) {
		fprintf(stderr, "usage: link_matrix vdso|no-vdso [LIBRARY]\n");
		return 2;
	}
	int want_vdso = strcmp(argv[1], "vdso") == 0;
	int has_vdso = getauxval(AT_SYSINFO_EHDR) != 0;
	CHECK(has_vdso == want_vdso, "the process %s a vDSO", has_vdso ? "has" : "has no");
#ifdef VIA_DLOPEN
	int plugin = argc == 5 && strcmp(argv[3], "plugin") == 0;
	CHECK(argc == 3 || plugin, "usage: link_matrix vdso|no-vdso LIBRARY [plugin GETRANDOM]");
	require_state = plugin && has_vdso && strcmp(argv[4], "vdso-getrandom") == 0;
	if (argc >= 3)
		rounds(argv[2], plugin && DLCLOSE_UNMAPS);
	const char *mode = "dlopen+dlclose";
#else
	CHECK(errno_at_main == 0, "errno is %d when main starts", errno_at_main);
	bind_linked();
#ifdef LIBC_NAMES
	check_bound_to_preload();
	const char *mode = "libc names (preload)";
#else
	const char *mode = "linked";
#endif
	check_everything(0);
	struct worker workers[THREADS];
	for (unsigned i = 0; i < THREADS; i++)
		start(&workers[i], i + 1, NULL, -1);
	for (unsigned i = 0; i < THREADS; i++)
		join(&workers[i]);
#endif
	(void)errno_at_main;
	printf("link_matrix (%s%s, %s): %d checks, %d failed\n", mode, MODE_TIME,
	       has_vdso ? "vDSO" : "no vDSO", checks, failures);
	return failures == 0 ? 0 : 1;
}
