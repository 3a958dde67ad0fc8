/* A 32-bit (i386) process for the tests of `vdsotime top` on x86_64, with no C library:
 * built with `cc -m32 -nostdlib -static`, it enters the kernel by `int $0x80`, in i386
 * numbering. It reads one byte from standard input, makes exactly CALLS calls each of
 * clock_gettime (265), clock_gettime64 (403), time (13) and gettimeofday (78), writes
 * one byte to standard output, and exits when standard input closes. As native x86_64
 * numbers, 13 and 78 would be rt_sigaction and getdents. */
#define CALLS 1000

static long sys3(long nr, long a, long b, long c)
{
    long ret;
    __asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
    return ret;
}

void _start(void)
{
    long ts32[2], ts64[4], tv[2];
    char byte = 'd';
    if (sys3(3, 0, (long)&byte, 1) != 1) /* read */
        sys3(1, 65, 0, 0);
    for (int i = 0; i < CALLS; i++) {
        sys3(265, 1, (long)ts32, 0); /* clock_gettime(CLOCK_MONOTONIC) */
        sys3(403, 1, (long)ts64, 0); /* clock_gettime64(CLOCK_MONOTONIC) */
        sys3(13, 0, 0, 0);           /* time(NULL) */
        sys3(78, (long)tv, 0, 0);    /* gettimeofday */
    }
    sys3(4, 1, (long)&byte, 1); /* write */
    while (sys3(3, 0, (long)&byte, 1) == 1)
        ;
    sys3(1, 0, 0, 0); /* exit */
    for (;;)
        ;
}
