/*
 * Checks vdsotime_getrandom and vdsotime_getentropy against the kernel's getrandom system
 * call and glibc's getentropy: the same count, or -1 with the same errno, for every flag
 * combination and length; NULL buffers; getentropy's 256-byte limit; errno untouched on
 * success; no repeated output.
 *
 * Built twice by the Rust tests, like api_test.c: as is, against libvdsotime, and with
 * -DLIBC_NAMES, calling getrandom and getentropy by their libc names under LD_PRELOAD of
 * libvdsotime_preload.so (it then also checks that both names are bound to the preload).
 *
 * `random_test count N WARM` instead makes WARM warm-up calls (enough for the thread to
 * take its vDSO state: its first draws make the system call), then N calls of 16 bytes
 * between two marker system calls (faccessat of a path no program uses), for strace to
 * count.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef LIBC_NAMES
#define T_getrandom getrandom
#define T_getentropy getentropy
#define MODE_NAMES "libc names (preload)"
#else
#include <vdsotime.h>
#define T_getrandom vdsotime_getrandom
#define T_getentropy vdsotime_getentropy
#define MODE_NAMES "libvdsotime"
#endif

#define MARKER "/vdsotime-getrandom-strace-marker"

#include "check.h"

/* Hidden from the optimiser, so that glibc's nonnull attributes cannot drop the NULL. */
static void *volatile null_ptr;

/* The kernel's answer: a count, or -errno. */
static long kernel_getrandom(void *buf, size_t len, unsigned int flags)
{
	long r = syscall(SYS_getrandom, buf, len, flags);
	return r < 0 ? -errno : r;
}

/* Calls `T_getrandom` with errno set to a sentinel; the count, or -errno. */
static long ours(void *buf, size_t len, unsigned int flags, int *errno_kept)
{
	errno = 12345;
	ssize_t r = T_getrandom(buf, len, flags);
	*errno_kept = errno == 12345;
	return r < 0 ? (r == -1 ? -errno : -100000) : r;
}

static int all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static void flags_and_lengths(void)
{
	static unsigned char a[4096], b[4096];
	const unsigned int extra[] = {1u << 4, 1u << 8, 1u << 31, ~0u};
	const size_t lengths[] = {0, 1, 16, 33, 256, 4096};
	for (unsigned int i = 0; i < 16 + 4; i++) {
		unsigned int flags = i < 16 ? i : extra[i - 16];
		for (size_t j = 0; j < sizeof lengths / sizeof lengths[0]; j++) {
			size_t len = lengths[j];
			int kept;
			long want = kernel_getrandom(a, len, flags);
			long got = ours(b, len, flags, &kept);
			CHECK(got == want, "getrandom(%zu, %#x): %ld, kernel %ld", len, flags, got, want);
			if (want >= 0) {
				CHECK(kept, "getrandom(%zu, %#x) changed errno on success", len, flags);
				CHECK(len < 16 || !all_zero(b, len), "getrandom(%zu, %#x) wrote zeros", len, flags);
			}
		}
	}
}

static void null_buffers(void)
{
	const unsigned int flags[] = {0, GRND_NONBLOCK, 8, GRND_INSECURE | GRND_RANDOM};
	for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
		for (size_t len = 0; len <= 16; len += 16) {
			int kept;
			long want = kernel_getrandom(null_ptr, len, flags[i]);
			long got = ours(null_ptr, len, flags[i], &kept);
			CHECK(got == want, "getrandom(NULL, %zu, %#x): %ld, kernel %ld", len, flags[i], got, want);
		}
	}
}

/* getentropy's result and errno (errno is a sentinel when it was left alone). */
static void entropy_call(int (*f)(void *, size_t), void *buf, size_t len, int *ret, int *err)
{
	errno = 12345;
	*ret = f(buf, len);
	*err = errno;
}

static int ours_getentropy(void *buf, size_t len) { return T_getentropy(buf, len); }

static void getentropy_cases(void)
{
	static unsigned char buf[512];
	const size_t lengths[] = {0, 1, 16, 255, 256, 257, 512};
	for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
		for (int null = 0; null <= 1; null++) {
			void *p = null ? null_ptr : buf;
			size_t len = lengths[i];
			int r, e;
			memset(buf, 0, sizeof buf);
			entropy_call(ours_getentropy, p, len, &r, &e);
			/* glibc's own getentropy (2.25+) is the reference, but under the preload the
			 * libc name is ours: there the expected values are glibc's documented ones. */
			int want_r = len > 256 || (null && len > 0) ? -1 : 0;
			int want_e = len > 256 ? EIO : (null && len > 0) ? EFAULT : 12345;
#ifndef LIBC_NAMES
			int gr, ge;
			entropy_call(getentropy, p, len, &gr, &ge);
			CHECK(gr == want_r && ge == want_e, "glibc getentropy(%s, %zu): %d errno %d", null ? "NULL" : "buf", len, gr, ge);
#endif
			CHECK(r == want_r && e == want_e, "getentropy(%s, %zu): %d errno %d, want %d errno %d",
			      null ? "NULL" : "buf", len, r, e, want_r, want_e);
			if (!null && r == 0 && len >= 16)
				CHECK(!all_zero(buf, len), "getentropy(%zu) wrote zeros", len);
		}
	}
}

static int cmp16(const void *a, const void *b) { return memcmp(a, b, 16); }

static void no_repeats(void)
{
	enum { N = 100000 };
	static unsigned char draws[N][16];
	for (int i = 0; i < N; i++)
		CHECK(T_getrandom(draws[i], 16, 0) == 16, "draw %d", i);
	qsort(draws, N, 16, cmp16);
	int repeats = 0;
	for (int i = 1; i < N; i++)
		repeats += memcmp(draws[i - 1], draws[i], 16) == 0;
	CHECK(repeats == 0, "%d repeated 16-byte draws in %d", repeats, N);
}

#ifdef LIBC_NAMES
static void bound_to_preload(const char *name)
{
	Dl_info info;
	void *f = dlsym(RTLD_DEFAULT, name);
	CHECK(f && dladdr(f, &info) && info.dli_fname && strstr(info.dli_fname, "vdsotime_preload"),
	      "%s is bound to %s", name, f && dladdr(f, &info) ? info.dli_fname : "(nothing)");
}
#endif

static int count(long n, long warm)
{
	unsigned char buf[16];
	for (long i = 0; i < warm; i++)
		if (T_getrandom(buf, sizeof buf, 0) != 16)
			return 1;
	syscall(SYS_faccessat, AT_FDCWD, MARKER, F_OK);
	for (long i = 0; i < n; i++)
		if (T_getrandom(buf, sizeof buf, 0) != 16)
			return 1;
	syscall(SYS_faccessat, AT_FDCWD, MARKER, F_OK);
	printf("%ld calls\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "count") == 0)
		return count(atol(argv[2]), atol(argv[3]));
	flags_and_lengths();
	null_buffers();
	getentropy_cases();
	no_repeats();
#ifdef LIBC_NAMES
	bound_to_preload("getrandom");
	bound_to_preload("getentropy");
#endif
	printf("random (%s): %d checks, %d failed\n", MODE_NAMES, checks, failures);
	return failures != 0;
}
