/*
 * aux_clocks: the auxiliary clocks (CLOCK_AUX + n, ids 16-23: Linux 6.17+ built with
 * CONFIG_POSIX_AUX_CLOCKS) read through libvdsotime's vdsotime_clock_gettime and
 * vdsotime_clock_getres, or, built with -DVIA_LIBC and run with
 * LD_PRELOAD=libvdsotime_preload.so, through the C library's clock_gettime and clock_getres,
 * which the preload interposes (the program checks that both names resolve in the preload,
 * and fails if not). Against the kernel's own system calls:
 *
 * - enables one clock that nothing uses (/sys/kernel/time/aux_clocks/<n>/aux_clock_enable)
 *   and leaves another disabled; disables it again at the end;
 * - a disabled clock fails with ENODEV and the id past the last with EINVAL, as the
 *   system call does; every aux id's clock_getres equals the system call's;
 * - readings between two system calls' when enabled, after clock_settime, after a
 *   frequency change and after a step (clock_adjtime), and never going back while steered;
 * - under a seccomp filter that denies the clock_gettime system call (EPERM), the enabled
 *   clock still reads (served in user space) and the disabled one gets the filter's EPERM;
 * - in a time namespace (with a day's offset on CLOCK_MONOTONIC, which aux clocks do not
 *   follow), everything as the system call there, and the enabled clock as outside.
 *
 * On a kernel without aux clocks, every aux id must fail as the system call fails; the rest
 * is a visible SKIP (a failure where VDSOTIME_REQUIRE names auxclock). Prints what it saw;
 * exits 0 when every check passed, 1 otherwise (2 on bad usage). Must run as root.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/timex.h>
#include <sys/wait.h>

#include "check.h"
#include "raw.h"

#ifdef VIA_LIBC
#include <dlfcn.h>
#define API "preload"
#define API_NAMES "the C library's clock_gettime and clock_getres, interposed by the preload"
#define API_GETTIME clock_gettime
#define API_GETRES clock_getres
#else
#include "vdsotime.h"
#define API "libvdsotime"
#define API_NAMES "libvdsotime's vdsotime_clock_gettime and vdsotime_clock_getres"
#define API_GETTIME vdsotime_clock_gettime
#define API_GETRES vdsotime_clock_getres
#endif

#define SYSFS "/sys/kernel/time/aux_clocks"
#define CLOCK_AUX_FIRST 16
#define AUX_CLOCKS 8 /* the kernel's MAX_AUX_CLOCKS */
#define PAST_LAST (CLOCK_AUX_FIRST + AUX_CLOCKS)
#define NS 1000000000LL
/* What the clock is set to, then steered by: +500 ppm, then a step of an hour. */
#define SET_S 1000000LL
#define FREQ_PPM 500L
#define STEP_S 3600LL
/* The time namespace's offset on CLOCK_MONOTONIC. */
#define TIMENS_MONOTONIC_S 86400LL
#ifndef ADJ_SETOFFSET
#define ADJ_SETOFFSET 0x0100
#endif
#ifndef ADJ_NANO
#define ADJ_NANO 0x2000
#endif

static long long ns(const struct timespec *ts)
{
	return (long long)ts->tv_sec * NS + ts->tv_nsec;
}

/* The API under test: 0 or -errno (errno kept on success, see CALL). */
static long api_gettime(clockid_t c, struct timespec *ts)
{
	long r;
	CALL(API_GETTIME(c, ts), r);
	return r;
}

/* The API's reading between two system calls' (or the system call's error, the same
 * before and after); 0 and *value, or -errno. */
static long bracket(clockid_t c, long long *value)
{
	struct timespec before, got, after;
	long sys = sys_clock_gettime(c, &before);
	long r = api_gettime(c, &got);
	long sys_after = sys_clock_gettime(c, &after);
	CHECK(sys == sys_after, "clock %d: system call %ld then %ld", (int)c, sys, sys_after);
	CHECK(r == sys, "clock %d: %s %ld, system call %ld", (int)c, API, r, sys);
	if (r != 0 || sys != 0)
		return r != 0 ? r : sys;
	CHECK(ts_le(&before, &got) && ts_le(&got, &after), "clock %d: %lld outside [%lld, %lld]",
	      (int)c, ns(&got), ns(&before), ns(&after));
	if (value != NULL)
		*value = ns(&got);
	return 0;
}

/* Every aux id and the one past them: readings (or errors) and resolutions as the
 * system call's. */
static void all_like_the_syscall(const char *what)
{
	for (int c = CLOCK_AUX_FIRST; c <= PAST_LAST; c++) {
		int before = failures;
		bracket(c, NULL);
		struct timespec res = { -1, -1 }, sys_res = { -2, -2 };
		long r;
		CALL(API_GETRES(c, &res), r);
		long sys = sys_clock_getres(c, &sys_res);
		CHECK(r == sys, "clock_getres(%d): %s %ld, system call %ld", c, API, r, sys);
		if (r == 0 && sys == 0)
			CHECK(ns(&res) == ns(&sys_res), "clock_getres(%d): %lld, system call %lld", c,
			      ns(&res), ns(&sys_res));
		if (failures != before)
			fprintf(stderr, "  (%s)\n", what);
	}
}

/* `SKIP aux_clocks: why`, and a failure where VDSOTIME_REQUIRE names `requirement`. */
static void skip(const char *requirement, const char *why)
{
	fprintf(stderr, "SKIP aux_clocks (%s): %s\n", API, why);
	const char *req = getenv("VDSOTIME_REQUIRE");
	size_t n = strlen(requirement);
	for (const char *p = req; p != NULL && *p != '\0'; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (strncmp(p, requirement, n) == 0 && (p[n] == ',' || p[n] == '\0')) {
			failures++;
			fprintf(stderr, "FAIL: VDSOTIME_REQUIRE names %s\n", requirement);
		}
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, text, strlen(text));
	int e = errno;
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -e;
}

static char *enable_path(int n)
{
	static char path[80];
	snprintf(path, sizeof path, SYSFS "/%d/aux_clock_enable", n);
	return path;
}

static int is_enabled(int n)
{
	char c = 0;
	int fd = open(enable_path(n), O_RDONLY);
	if (fd < 0)
		return 0;
	int ok = read(fd, &c, 1) == 1;
	close(fd);
	return ok && c == '1';
}

static long adjtime_raw(clockid_t c, unsigned modes, long freq, long long step_s)
{
	struct timex tx;
	memset(&tx, 0, sizeof tx);
	tx.modes = modes;
	tx.freq = freq;
	tx.time.tv_sec = step_s;
	return syscall(SYS_clock_adjtime, c, &tx) >= 0 ? 0 : -errno;
}

/* The library's and the system call's readings, interleaved, never go back. */
static void monotonic_while_steered(clockid_t c)
{
	long long last = 0;
	int before = failures;
	for (int round = 0; round < 20000; round++) {
		struct timespec lib, sys;
		long r = api_gettime(c, &lib);
		long s = sys_clock_gettime(c, &sys);
		CHECK(r == 0 && s == 0 && last <= ns(&lib) && ns(&lib) <= ns(&sys),
		      "clock %d round %d: %lld then %s %lld then system call %lld", (int)c, round,
		      last, API, ns(&lib), ns(&sys));
		if (failures != before)
			return;
		last = ns(&sys);
	}
}

/* A seccomp filter (x86_64's system call numbers) that fails clock_gettime with EPERM. */
struct bpf_insn {
	uint16_t code;
	uint8_t jt, jf;
	uint32_t k;
};
struct bpf_prog {
	unsigned short len;
	struct bpf_insn *filter;
};

static int deny_clock_gettime(void)
{
#ifdef __x86_64__
	enum { LD_W_ABS = 0x20, JEQ_K = 0x15, RET_K = 0x06 };
	struct bpf_insn insns[] = {
		{ LD_W_ABS, 0, 0, 4 }, /* seccomp_data.arch */
		{ JEQ_K, 1, 0, 0xC000003E }, /* AUDIT_ARCH_X86_64 */
		{ RET_K, 0, 0, 0x80000000 }, /* SECCOMP_RET_KILL_PROCESS */
		{ LD_W_ABS, 0, 0, 0 }, /* seccomp_data.nr */
		{ JEQ_K, 0, 1, SYS_clock_gettime },
		{ RET_K, 0, 0, 0x00050000 | EPERM }, /* SECCOMP_RET_ERRNO */
		{ RET_K, 0, 0, 0x7fff0000 }, /* SECCOMP_RET_ALLOW */
	};
	struct bpf_prog prog = { sizeof insns / sizeof insns[0], insns };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -errno;
	return prctl(PR_SET_SECCOMP, 2 /* SECCOMP_MODE_FILTER */, &prog) == 0 ? 0 : -errno;
#else
	return -ENOSYS;
#endif
}

/* Runs `child` in a forked process; whether it exited 0. Its output is flushed first. */
static int in_child(void (*child)(void *), void *arg)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		failures = 0; /* the child's own verdict, whatever the parent's checks said */
		child(arg);
		fflush(NULL);
		_exit(failures == 0 ? 0 : 1);
	}
	int status = 0;
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "fork/waitpid: %s", strerror(errno));
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Under the filter: the enabled clock (`*(int *)arg`) reads, the rest reach the filter. */
static void served_in_user_space(void *arg)
{
	int on = *(int *)arg;
	struct timespec ts;
	long denied = deny_clock_gettime();
	if (denied != 0) {
		skip("seccomp", strerror((int)-denied));
		return;
	}
	CHECK(sys_clock_gettime(CLOCK_MONOTONIC, &ts) == -EPERM, "the filter denies the system call");
	for (int c = CLOCK_AUX_FIRST; c <= PAST_LAST; c++) {
		long r = api_gettime(c, &ts);
		if (c == on) {
			CHECK(r == 0, "enabled clock %d under seccomp: %ld", c, r);
			printf("AUX_SERVED in user space under a filter denying clock_gettime: %s clock %d = %lld ns\n",
			       API, c, r == 0 ? ns(&ts) : -1);
		} else {
			CHECK(r == -EPERM, "clock %d under seccomp: %ld, not the filter's EPERM", c, r);
		}
	}
	printf("under seccomp: the disabled clocks and id %d reached the system call (EPERM)\n", PAST_LAST);
}

/* In a new time namespace: the grandchild checks everything against the system call there
 * and sends the clocks' readings back through the pipe `arg`. */
static void inside_a_time_namespace(void *arg)
{
	int *pipe_fds = arg;
	if (unshare(CLONE_NEWTIME) != 0) {
		skip("timens", strerror(errno));
		return;
	}
	char offsets[64];
	snprintf(offsets, sizeof offsets, "%d %lld 0\n", CLOCK_MONOTONIC, TIMENS_MONOTONIC_S);
	int w = write_file("/proc/self/timens_offsets", offsets);
	CHECK(w == 0, "/proc/self/timens_offsets: %s", strerror(-w));
	pid_t pid = fork();
	if (pid == 0) {
		all_like_the_syscall("in a time namespace");
		struct timespec mono, aux;
		long long sent[2] = { -1, -1 };
		if (api_gettime(CLOCK_MONOTONIC, &mono) == 0)
			sent[0] = ns(&mono);
		int on = pipe_fds[2];
		if (api_gettime(on, &aux) == 0)
			sent[1] = ns(&aux);
		CHECK(write(pipe_fds[1], sent, sizeof sent) == sizeof sent, "pipe: %s", strerror(errno));
		fflush(NULL);
		_exit(failures == 0 ? 0 : 1);
	}
	int status = 0;
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "fork/waitpid: %s", strerror(errno));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the process in the namespace failed");
}

#ifdef VIA_LIBC
/* The file that defines `name` for this process: the preload's when it serves it. */
static void served_by_the_preload(const char *name)
{
	Dl_info info = { 0 };
	void *f = dlsym(RTLD_DEFAULT, name);
	int found = f != NULL && dladdr(f, &info) != 0 && info.dli_fname != NULL;
	const char *file = found ? info.dli_fname : "(not found)";
	printf("%s resolves in %s\n", name, file);
	CHECK(strstr(file, "libvdsotime_preload") != NULL, "%s is not the preload's: %s", name, file);
}
#endif

/* Everything on the enabled clock `on`, with `off` disabled. */
static void against_the_kernel(int on, int off)
{
	struct timespec ts;
	long long set, before_step, stepped;
	CHECK(sys_clock_gettime(off, &ts) == -ENODEV, "disabled clock %d: system call not ENODEV", off);
	CHECK(api_gettime(off, &ts) == -ENODEV, "disabled clock %d: %s not ENODEV", off, API);
	CHECK(sys_clock_gettime(PAST_LAST, &ts) == -EINVAL, "clock %d: system call not EINVAL", PAST_LAST);
	CHECK(api_gettime(PAST_LAST, &ts) == -EINVAL, "clock %d: %s not EINVAL", PAST_LAST, API);
	all_like_the_syscall("enabled, not set");

	struct timespec to = { (time_t)SET_S, 0 };
	long r = syscall(SYS_clock_settime, on, &to) == 0 ? 0 : -errno;
	CHECK(r == 0, "clock_settime(%d): %s", on, strerror((int)-r));
	CHECK(bracket(on, &set) == 0 && set >= SET_S * NS && set < (SET_S + 60) * NS,
	      "clock %d set to %lld s reads %lld ns", on, SET_S, set);
	printf("set to %lld s: %s clock %d reads %lld ns (bracketed)\n", SET_S, API, on, set);
	r = adjtime_raw(on, ADJ_FREQUENCY, FREQ_PPM << 16, 0);
	CHECK(r == 0, "clock_adjtime(ADJ_FREQUENCY): %s", strerror((int)-r));
	usleep(200000);
	CHECK(bracket(on, &before_step) == 0, "clock %d steered by %ld ppm", on, FREQ_PPM);
	printf("steered by %ld ppm: reads %lld ns (bracketed)\n", FREQ_PPM, before_step);
	r = adjtime_raw(on, ADJ_SETOFFSET | ADJ_NANO, 0, STEP_S);
	CHECK(r == 0, "clock_adjtime(ADJ_SETOFFSET): %s", strerror((int)-r));
	CHECK(bracket(on, &stepped) == 0 && stepped - before_step >= STEP_S * NS,
	      "clock %d stepped by %lld s: %lld then %lld", on, STEP_S, before_step, stepped);
	printf("stepped by %lld s: reads %lld ns (bracketed)\n", STEP_S, stepped);
	monotonic_while_steered(on);
	all_like_the_syscall("enabled, set and steered");
	printf("every aux id and %d: readings between the system call's, errors and clock_getres equal to it\n",
	       PAST_LAST);

	CHECK(in_child(served_in_user_space, &on), "the process under seccomp failed");

	int fds[3] = { -1, -1, on };
	CHECK(pipe(fds) == 0, "pipe: %s", strerror(errno));
	struct timespec mono0, aux0, mono1, aux1;
	sys_clock_gettime(CLOCK_MONOTONIC, &mono0);
	sys_clock_gettime(on, &aux0);
	int ok = in_child(inside_a_time_namespace, fds);
	sys_clock_gettime(CLOCK_MONOTONIC, &mono1);
	sys_clock_gettime(on, &aux1);
	long long inside[2] = { -1, -1 };
	close(fds[1]);
	int got = read(fds[0], inside, sizeof inside) == sizeof inside;
	close(fds[0]);
	CHECK(ok, "the process creating the time namespace failed");
	if (ok && got) {
		long long shift = TIMENS_MONOTONIC_S * NS;
		CHECK(ns(&mono0) + shift <= inside[0] && inside[0] <= ns(&mono1) + shift,
		      "CLOCK_MONOTONIC in the namespace: %lld, outside [%lld, %lld] + %lld s", inside[0],
		      ns(&mono0), ns(&mono1), TIMENS_MONOTONIC_S);
		CHECK(ns(&aux0) <= inside[1] && inside[1] <= ns(&aux1),
		      "clock %d in the namespace: %lld, outside [%lld, %lld]", on, inside[1], ns(&aux0),
		      ns(&aux1));
		printf("in a time namespace (CLOCK_MONOTONIC + %lld s): clock %d reads %lld ns, as outside (bracketed)\n",
		       TIMENS_MONOTONIC_S, on, inside[1]);
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("aux_clocks through %s\n", API_NAMES);
#ifdef VIA_LIBC
	served_by_the_preload("clock_gettime");
	served_by_the_preload("clock_getres");
#endif
	if (access(SYSFS, F_OK) != 0) {
		all_like_the_syscall("no aux clocks");
		skip("auxclock", "this kernel has no auxiliary clocks (no " SYSFS
				 "); every aux id failed as the system call fails");
	} else {
		int free_clocks[2], found = 0;
		for (int n = 0; n < AUX_CLOCKS && found < 2; n++)
			if (!is_enabled(n))
				free_clocks[found++] = n;
		if (found < 2) {
			skip("auxclock", "fewer than two auxiliary clocks are disabled");
		} else if (write_file(enable_path(free_clocks[0]), "1") != 0) {
			skip("auxclock", "cannot enable an auxiliary clock (not root?)");
		} else {
			int on = CLOCK_AUX_FIRST + free_clocks[0], off = CLOCK_AUX_FIRST + free_clocks[1];
			printf("enabled clock %d (%s); clock %d stays disabled\n", on,
			       enable_path(free_clocks[0]), off);
			against_the_kernel(on, off);
			int w = write_file(enable_path(free_clocks[0]), "0");
			CHECK(w == 0, "disabling clock %d again: %s", on, strerror(-w));
		}
	}
	printf("%d checks, %d failed\n", checks, failures);
	return failures == 0 ? 0 : 1;
}
