/*
 * A process that unmaps its vDSO (as sandboxes and checkpoint/restore tools do), then calls
 * libvdsotime's functions for the first time: each must answer as the system call does.
 * Unmaps [vdso] and the kernel's data pages beside it ([vvar], [vvar_vclock]), found in
 * /proc/self/maps; with the argument "prot_none", makes [vdso] unreadable (PROT_NONE)
 * instead and leaves every mapping in place. vdsotime_time and vdsotime_gettimeofday are left out: in the shared
 * library on x86-64 glibc they are bound to the vDSO when the program is loaded (as glibc's
 * own time and gettimeofday are), before main can unmap it. Prints "N failed".
 */
#define _GNU_SOURCE
#include <stdio.h>
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

int main(int argc, char **argv)
{
	int prot_none = argc > 1 && strcmp(argv[1], "prot_none") == 0;
	unsigned long ehdr = getauxval(AT_SYSINFO_EHDR);
	if (ehdr == 0) {
		printf("no vDSO, 0 failed\n");
		return 0;
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
	printf("%s %d mappings, %d failed\n", prot_none ? "PROT_NONE [vdso] among" : "unmapped", n,
	       failed);
	fflush(stdout);
	_exit(failed != 0);
}
