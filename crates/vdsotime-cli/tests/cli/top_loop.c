/* A process reading the time at a known rate, for the tests of `vdsotime top`.
 * usage: top_loop MODE RATE SECONDS [wait]
 *   syscall  syscall(SYS_clock_gettime, CLOCK_MONOTONIC): always the kernel
 *   cputime  clock_gettime(CLOCK_PROCESS_CPUTIME_ID) through the C library
 *   vdso     clock_gettime(CLOCK_MONOTONIC) through the C library (the vDSO)
 * Paced with clock_nanosleep on absolute deadlines, so the rate holds however late a
 * wake-up is. With `wait`, it reads one byte from standard input before the first call
 * (so a test starts the calls once the tracer is ready), writes one byte to standard
 * output after the last (RATE x SECONDS calls), and exits when standard input closes. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 4 && !(argc == 5 && strcmp(argv[4], "wait") == 0)) {
        fprintf(stderr, "usage: %s syscall|cputime|vdso RATE SECONDS [wait]\n", argv[0]);
        return 64;
    }
    const char *mode = argv[1];
    long rate = atol(argv[2]);
    double seconds = atof(argv[3]);
    if (rate <= 0 || seconds <= 0) return 64;
    long calls = (long)(rate * seconds), step = 1000000000L / rate;
    struct timespec next, ts;
    char go;
    if (argc == 5 && read(0, &go, 1) != 1) return 65;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (long i = 0; i < calls; i++) {
        if (strcmp(mode, "syscall") == 0)
            syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
        else if (strcmp(mode, "cputime") == 0)
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        else
            clock_gettime(CLOCK_MONOTONIC, &ts);
        next.tv_nsec += step;
        while (next.tv_nsec >= 1000000000L) {
            next.tv_nsec -= 1000000000L;
            next.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
    }
    if (argc == 5) {
        if (write(1, "d", 1) != 1) return 65;
        while (read(0, &go, 1) > 0) {
        }
    }
    return 0;
}
