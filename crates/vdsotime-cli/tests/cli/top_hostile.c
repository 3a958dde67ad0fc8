/* A process that aims a privileged reader at something other than the library it maps,
 * for the tests of `vdsotime top`.
 * usage: top_hostile fifo|zero DIR LIBRARY SECONDS
 * Copies LIBRARY to DIR/libc.so.6, maps the copy below every other mapping (so it is the
 * first libc.so.6 in /proc/PID/maps), unlinks it and puts at that path a FIFO (`fifo`)
 * or a symbolic link to /dev/zero (`zero`). Writes one byte to standard output once
 * ready, then makes a direct clock_gettime system call every millisecond for SECONDS. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s fifo|zero DIR LIBRARY SECONDS\n", argv[0]);
        return 64;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/libc.so.6", argv[2]);
    int in = open(argv[3], O_RDONLY), out = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0) return 66;
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n) return 74;
    struct stat st;
    if (fstat(out, &st) != 0) return 74;
    void *at = mmap((void *)0x200000000UL, (size_t)st.st_size, PROT_READ,
                    MAP_PRIVATE | MAP_FIXED_NOREPLACE, out, 0);
    if (at == MAP_FAILED) return 71;
    close(out);
    close(in);
    if (unlink(path) != 0) return 73;
    if (strcmp(argv[1], "fifo") == 0) {
        if (mkfifo(path, 0666) != 0) return 73;
    } else if (symlink("/dev/zero", path) != 0) {
        return 73;
    }
    if (write(1, "r", 1) != 1) return 74;
    long calls = (long)(atof(argv[4]) * 1000);
    struct timespec ts, pause = {0, 1000000};
    for (long i = 0; i < calls; i++) {
        syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
        nanosleep(&pause, NULL);
    }
    return 0;
}
