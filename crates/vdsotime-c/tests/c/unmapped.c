/*
 * A process that unmaps its vDSO (as sandboxes and checkpoint/restore tools do) before
 * libvdsotime binds its functions, then calls them: each must answer as the system call
 * does. Unmaps [vdso] and the kernel's data pages beside it ([vvar], [vvar_vclock]), found
 * in /proc/self/maps; with VDSOTIME_TEST_UNMAP=prot_none in the environment, makes [vdso]
 * unreadable (PROT_NONE) instead and leaves every mapping in place. Prints "N failed".
 *
 * libvdsotime binds its functions when it is loaded, as glibc binds its own: a function
 * bound to the vDSO before the unmap faults, as glibc's clock_gettime would. So the unmap
 * comes first, from a constructor of this program with a priority, which runs before the
 * library's (it has none): the program links the static archive. (With the shared library
 * nothing of the program runs before the library's constructor, and glibc's dlopen reads
 * the vDSO's link map: unmapped, it faults.) vdsotime_time and vdsotime_gettimeofday are
 * left out: on x86-64 glibc they are indirect functions, bound to the vDSO when the program
 * is relocated, before any constructor.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <vdsotime.h>

static int failed;

static void check(int ok, const char *what)
{
	if (!ok) {
		printf("FAIL %s\n", what);
		failed++;
	}
}

static long long ns(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
}

static int prot_none, mappings, no_vdso;

/* Unmaps (or protects) the vDSO and its data pages. */
static void unmap_vdso(void)
{
	const char *mode = getenv("VDSOTIME_TEST_UNMAP");
	prot_none = mode != NULL && strcmp(mode, "prot_none") == 0;
	unsigned long ehdr = getauxval(AT_SYSINFO_EHDR);
	if (ehdr == 0) {
		no_vdso = 1;
		return;
	}
	unsigned long starts[8], lens[8];
	int n = 0, found = 0;
	char line[512];
	FILE *maps = fopen("/proc/self/maps", "r");
	while (maps && fgets(line, sizeof line, maps) && n < 8) {
		unsigned long a, b;
		if ((strstr(line, "[vdso]") || strstr(line, "[vvar")) &&
		    sscanf(line, "%lx-%lx", &a, &b) == 2) {
			starts[n] = a;
			lens[n++] = b - a;
			found |= a == ehdr;
		}
	}
	if (maps)
		fclose(maps);
	check(found, "[vdso] in /proc/self/maps at AT_SYSINFO_EHDR");
	for (int i = 0; i < n; i++) {
		if (!prot_none)
			check(munmap((void *)starts[i], lens[i]) == 0, "munmap");
		else if (starts[i] == ehdr)
			check(mprotect((void *)starts[i], lens[i], PROT_NONE) == 0, "mprotect");
	}
	mappings = n;
}

/* Priority 101 runs before every constructor without one, the library's among them. */
__attribute__((constructor(101))) static void early(void)
{
	unmap_vdso();
}

int main(void)
{
	if (no_vdso) {
		printf("no vDSO, 0 failed\n");
		return 0;
	}
	static const clockid_t clocks[] = { CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW,
		CLOCK_REALTIME_COARSE, CLOCK_MONOTONIC_COARSE, CLOCK_BOOTTIME, CLOCK_TAI };
	for (size_t i = 0; i < sizeof clocks / sizeof clocks[0]; i++) {
		struct timespec before, got, after, res, sys_res;
		syscall(SYS_clock_gettime, clocks[i], &before);
		int r = vdsotime_clock_gettime(clocks[i], &got);
		syscall(SYS_clock_gettime, clocks[i], &after);
		check(r == 0 && ns(&before) <= ns(&got) && ns(&got) <= ns(&after),
		      "clock_gettime between two system calls");
		r = vdsotime_clock_getres(clocks[i], &res);
		syscall(SYS_clock_getres, clocks[i], &sys_res);
		check(r == 0 && ns(&res) == ns(&sys_res), "clock_getres as the system call");
	}
	unsigned int cpu = 0, node = 0;
	check(vdsotime_getcpu(&cpu, &node) == 0 && cpu < 65536, "getcpu");
	check(vdsotime_sched_getcpu() >= 0, "sched_getcpu");
	unsigned char buf[32];
	check(vdsotime_getrandom(buf, sizeof buf, 0) == (ssize_t)sizeof buf, "getrandom");
	printf("%s %d mappings, %d failed\n", prot_none ? "PROT_NONE [vdso] among" : "unmapped",
	       mappings, failed);
	fflush(stdout);
	_exit(failed != 0);
}
