#define _POSIX_C_SOURCE 200809L /* struct timespec under -std=c99 too */
#include <stdio.h>
#include <vdsotime.h>

int main(void)
{
	struct timespec ts;
	if (vdsotime_clock_gettime(CLOCK_MONOTONIC, &ts) != 0) {
		perror("vdsotime_clock_gettime");
		return 1;
	}
	printf("%lld.%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
	return 0;
}
